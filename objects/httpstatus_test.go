package objects

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseStatusCodes(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
		bad  string
	}{
		{nil, "[]", ""},
		{[]string{"500"}, "[{500 500}]", ""},
		{[]string{"500", "502-504"}, "[{500 500} {502 504}]", ""},
		{[]string{"100-599"}, "[{100 599}]", ""},
		{[]string{"50"}, "", `"50"`},
		{[]string{"600"}, "", `"600"`},
		{[]string{"504-502"}, "", `"504-502"`},
		{[]string{"500-"}, "", `"500-"`},
		{[]string{"5xx"}, "", `"5xx"`},
		{[]string{"500", "099"}, "", `"099"`},
	} {
		got, err := ParseStatusCodes(tc.in)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%q: error %v, want one naming %s", tc.in, err, tc.bad)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != tc.want {
			t.Errorf("%q: %v %v, want %s", tc.in, got, err, tc.want)
		}
	}
}
