package httpapi

import "testing"

func TestInvalidUTF8FieldNamesThePath(t *testing.T) {
	cases := []struct {
		raw  string
		want string
	}{
		{"{\"to\":\"a\",\"subject\":\"caf\xe9\",\"body\":\"x\"}", "subject"},
		{"{\"to\":\"a\",\"subject\":\"ok\",\"body\":\"\xff\xfe\"}", "body"},
		{"{\"question\":\"q\",\"options\":[\"yes\",\"n\xc3o\"]}", "options[1]"},
		{"{\"a\":{\"b\":[1,{\"c\":\"\x80\"}]}}", "a.b[1].c"},
		{"{\"a\":[{\"x\":1},{\"y\":2}],\"z\":\"ok\",\"w\":\"\xc0\xaf\"}", "w"},
		{"{\"k\xffey\":\"v\"}", "k\ufffdey"},
		{"\"\xff\"", "body"},
		{"{\"a\":\"\xff", "body"},
	}
	for _, c := range cases {
		got, bad := invalidUTF8Field([]byte(c.raw))
		if !bad || got != c.want {
			t.Errorf("invalidUTF8Field(%q) = %q, %v; want %q", c.raw, got, bad, c.want)
		}
	}
	if f, bad := invalidUTF8Field([]byte(`{"subject":"café 重构 ✓","n":[1,2,{"x":null}]}`)); bad {
		t.Errorf("valid UTF-8 reported at %q", f)
	}
}
