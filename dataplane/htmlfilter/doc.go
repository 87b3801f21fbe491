// Package htmlfilter applies BIG-IP's html profile to a response body as
// it streams: the profile's html rules (`ltm html-rule tag-append-html`,
// tag-prepend-html, tag-remove, tag-remove-attribute, tag-raise-event,
// comment-remove and comment-raise-event) are matched against the tags
// and comments of the body, and what they say is done to them in place,
// part by part, without the body ever being held whole. A tag or comment
// split across two parts is held until its end arrives (at most MaxHold
// bytes, beyond which the held bytes pass as text, unparsed).
//
// The scanner is its own: it needs only to find where tags and comments
// begin and end, and to pass every other byte through as it came; the
// attributes of a tag some rule names are read by golang.org/x/net/html's
// tokenizer, so that quoting and character references are read as a
// browser reads them. The contents of script, style, textarea, title and
// xmp elements are text, as HTML says, and so are never matched.
package htmlfilter
