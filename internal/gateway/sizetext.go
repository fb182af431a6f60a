package gateway

import "fmt"

// SizeText writes a byte count for people in one unit family, as the web
// page shows file sizes (issue 18 point 9): "512 B", "1 MiB", "1.5 MiB",
// "25 MiB", "1 GiB" — binary units (1 KiB = 1024 B), one decimal below 10
// unless the value is whole, else rounded.
func SizeText(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	v := float64(n) / 1024
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	switch {
	case v == float64(int64(v)):
		return fmt.Sprintf("%d %s", int64(v), units[i])
	case v < 10:
		return fmt.Sprintf("%.1f %s", v, units[i])
	}
	return fmt.Sprintf("%.0f %s", v, units[i])
}
