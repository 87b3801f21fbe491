// Package streamfilter rewrites a byte stream with search/replace pairs as
// it passes through, the way BIG-IP's stream profile (`ltm profile stream`,
// properties source and target) and the iRule commands STREAM::expression
// and STREAM::enable rewrite HTTP bodies and plain TCP streams. The HTTP
// engine feeds a body part by part, and the TCP proxy each read, in
// whatever splits the network delivers, and both need output as it goes;
// a body or stream is never held whole. What a filter keeps
// between parts is bounded by the max match size (BIG-IP's default is
// 4096 bytes).
//
// # Expressions
//
// An expression is one or more sets <d>search<d>replacement<d> separated
// by whitespace, as in
//
//	@IE@Apache@ @Windows@Linux@
//	=http://imageserver-[0-9]{1,4}\.example\.com==
//
// or following each other directly (@IE@Apache@@Windows@Linux@, as
// F5's article on multiple replacements writes a profile's target).
// The first character of a set is its delimiter, one of
// @ / & _ = - : ? * . , and all three delimiters of a set are that character;
// there is no escape, so a search or replacement that contains the
// delimiter needs another one. The search is a regular expression in RE2
// syntax (Go's regexp package) and must not be empty. The replacement is
// literal text, without backreferences; an empty replacement deletes the
// match. Leading and trailing whitespace of the whole expression is
// ignored, but every set must start with a delimiter: BIG-IP quietly
// matches nothing when a set starts with a space, and an error is easier
// to find than a rule that does nothing.
//
// # Matching
//
// Where BIG-IP's documentation is silent, this package makes these
// choices:
//
//   - All sets act as one alternation (s1)|(s2)|... with Perl (RE2)
//     semantics, not POSIX: the leftmost match wins; of matches at the same
//     position the set listed first wins, and that set's own leftmost-first
//     preference decides the length. The alternation is compiled as one
//     regexp and the stream scanned once, except when every set starts with
//     literal text (the usual @IE@Apache@ @Windows@Linux@): then each set
//     is searched on its own with a substring search, which finds the same
//     matches many times faster.
//   - A match of the empty string (a search such as a* can make one) is
//     never replaced: the scan moves on by one character (one byte for
//     ASCII, one UTF-8 sequence otherwise, as Go's regexp does).
//   - Matches never overlap; the scan resumes at the end of a match.
//   - The search sees the stream as a whole, never lines or buffers, so
//     the assertions ^, $, \A, \z, \b and \B are refused by Parse: their
//     meaning would depend on where the network happened to split the
//     stream.
//   - Text is matched as UTF-8, as Go's regexp does: a byte that is not
//     part of a valid UTF-8 sequence matches as U+FFFD, one byte at a time.
//     The filter never separates the bytes of one UTF-8 sequence between
//     what it emits and what it holds back.
//
// # Holding back
//
// A filter holds back the bytes that could still begin a match once more
// data arrives. With a max match size M, a match found in the pending
// bytes is final when it starts before the last M-1 of them, or when the
// stream ends; a match that starts within them, and everything after its
// start, waits for more data, since a greedy search such as a+ could still
// extend it. When no match is found, all but the last M-1 pending bytes are
// emitted. When every search has a bounded length, shorter than M, the
// window shrinks to that length (plus the bytes of a UTF-8 sequence still
// incomplete at the end of a part), so a search like http:// holds six
// bytes rather than 4095. When every search starts with literal text,
// only the bytes from the first place that text (or the start of it, at
// the end of a part) appears are held: bytes that cannot begin a match
// go out at once, so a line protocol's line end is not kept waiting for
// data that never comes. The result is the same either way; holding less
// only lowers latency and memory.
//
// The output therefore equals a one-shot replacement over the whole stream,
// for any split of the stream into parts, whenever at every position of the
// stream the longest string any search can match there is at most M bytes
// (at most M-3 bytes when a multi-byte UTF-8 sequence can straddle the edge
// of the window). A match longer than that is not waited for: where the
// window cannot see a whole match its bytes pass through unchanged. BIG-IP
// resets the connection in that case; passing the data through keeps the
// response intact.
package streamfilter
