package gateway

import (
	"strings"
	"testing"
)

// The generated admin password never starts or ends with '-' or '_'
// (issue 18 point 13); a base64url draw does so about one time in 16, so
// 2000 draws would show it.
func TestGeneratedPasswordHasNoDashAtEitherEnd(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 2000; i++ {
		p := GeneratedPassword()
		if len(p) != 20 || strings.HasPrefix(p, "-") || strings.HasPrefix(p, "_") || strings.HasSuffix(p, "-") || strings.HasSuffix(p, "_") {
			t.Fatalf("GeneratedPassword() = %q", p)
		}
		if seen[p] {
			t.Fatalf("GeneratedPassword() repeated %q", p)
		}
		seen[p] = true
	}
}
