package gateway

import "testing"

func TestSizeTextUsesOneUnitFamily(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 1 << 20: "1 MiB",
		26214400: "25 MiB", 30408704: "29 MiB", 1<<20 + 4096: "1.0 MiB", 1 << 30: "1 GiB",
	} {
		if got := SizeText(n); got != want {
			t.Errorf("SizeText(%d) = %q, want %q", n, got, want)
		}
	}
}
