package blob

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func files(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestPutStoresContentUnderItsSHA256AndReadsBack(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	content := []byte("hello attachment\n")
	info, err := s.Put(bytes.NewReader(content), 1024)
	if err != nil {
		t.Fatal(err)
	}
	if info.SHA256 != sumOf(content) || info.Size != int64(len(content)) {
		t.Fatalf("info = %+v, want sha %s size %d", info, sumOf(content), len(content))
	}
	f, err := s.Open(info.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, _ := io.ReadAll(f)
	if !bytes.Equal(got, content) {
		t.Fatalf("read back %q", got)
	}
	want := filepath.Join("sha256", info.SHA256[:2], info.SHA256)
	if fs := files(t, s.Root()); len(fs) != 1 || fs[0] != want {
		t.Fatalf("files on disk = %v, want [%s]", fs, want)
	}
}

func TestPutSameContentTwiceKeepsOneFile(t *testing.T) {
	s, _ := Open(t.TempDir())
	a, err := s.Put(strings.NewReader("same bytes"), 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Put(strings.NewReader("same bytes"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatalf("two puts of the same content gave %+v and %+v", a, b)
	}
	if fs := files(t, s.Root()); len(fs) != 1 {
		t.Fatalf("files on disk = %v, want one blob and no temporary file", fs)
	}
}

func TestPutOverLimitLeavesNothingOnDisk(t *testing.T) {
	s, _ := Open(t.TempDir())
	for _, size := range []int{11, 12, 100000} {
		_, err := s.Put(bytes.NewReader(make([]byte, size)), 10)
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("size %d: err = %v, want ErrTooLarge", size, err)
		}
	}
	if fs := files(t, s.Root()); len(fs) != 0 {
		t.Fatalf("files left on disk: %v", fs)
	}
	// Exactly at the limit is accepted.
	if _, err := s.Put(bytes.NewReader(make([]byte, 10)), 10); err != nil {
		t.Fatalf("content of exactly the limit refused: %v", err)
	}
}

// endless yields bytes forever and counts what was read from it.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	e.n += int64(len(p))
	return len(p), nil
}

func TestPutStopsReadingShortlyPastTheLimit(t *testing.T) {
	s, _ := Open(t.TempDir())
	src := &endless{}
	_, err := s.Put(src, 1<<20)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if src.n > 1<<20+64<<10 {
		t.Fatalf("read %d bytes from a source for a 1 MiB limit", src.n)
	}
}

type failingReader struct{ after int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errors.New("connection reset")
	}
	n := min(len(p), f.after)
	f.after -= n
	return n, nil
}

func TestPutReadErrorLeavesNothingOnDisk(t *testing.T) {
	s, _ := Open(t.TempDir())
	_, err := s.Put(&failingReader{after: 5000}, 0)
	var re *ReadError
	if !errors.As(err, &re) || re.Err.Error() != "connection reset" {
		t.Fatalf("err = %v, want a *ReadError with the reader's error", err)
	}
	if fs := files(t, s.Root()); len(fs) != 0 {
		t.Fatalf("files left on disk: %v", fs)
	}
}

func TestConcurrentPutsOfSameContent(t *testing.T) {
	s, _ := Open(t.TempDir())
	content := bytes.Repeat([]byte("x"), 100000)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Put(bytes.NewReader(content), 0)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if fs := files(t, s.Root()); len(fs) != 1 {
		t.Fatalf("files on disk = %v", fs)
	}
	st, err := s.Stat(sumOf(content))
	if err != nil || st.Size != int64(len(content)) {
		t.Fatalf("stat = %+v, %v", st, err)
	}
}

func TestOpenRejectsMalformedAndMissingSums(t *testing.T) {
	s, _ := Open(t.TempDir())
	for _, bad := range []string{"", "../../etc/passwd", strings.Repeat("A", 64), strings.Repeat("a", 63)} {
		if _, err := s.Open(bad); !errors.Is(err, ErrBadSum) {
			t.Errorf("Open(%q) err = %v, want ErrBadSum", bad, err)
		}
	}
	if _, err := s.Open(strings.Repeat("a", 64)); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing blob err = %v, want ErrNotFound", err)
	}
}

func TestRemoveIfIdleKeepsFreshBlobs(t *testing.T) {
	s, _ := Open(t.TempDir())
	info, _ := s.Put(strings.NewReader("content"), 0)
	removed, err := s.RemoveIfIdle(info.SHA256, time.Now().Add(-time.Hour))
	if err != nil || removed {
		t.Fatalf("fresh blob removed=%v err=%v", removed, err)
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(s.path(info.SHA256), old, old)
	removed, err = s.RemoveIfIdle(info.SHA256, time.Now().Add(-time.Hour))
	if err != nil || !removed {
		t.Fatalf("idle blob removed=%v err=%v", removed, err)
	}
	if _, err := s.Stat(info.SHA256); !errors.Is(err, ErrNotFound) {
		t.Fatalf("blob still there: %v", err)
	}
	// Re-uploading refreshes an idle blob's time.
	info, _ = s.Put(strings.NewReader("again"), 0)
	os.Chtimes(s.path(info.SHA256), old, old)
	s.Put(strings.NewReader("again"), 0)
	if removed, _ := s.RemoveIfIdle(info.SHA256, time.Now().Add(-time.Hour)); removed {
		t.Fatal("a blob re-uploaded just now was removed")
	}
}

func TestSumsAndCleanTemp(t *testing.T) {
	s, _ := Open(t.TempDir())
	a, _ := s.Put(strings.NewReader("a"), 0)
	b, _ := s.Put(strings.NewReader("b"), 0)
	sums, err := s.Sums()
	if err != nil || len(sums) != 2 {
		t.Fatalf("sums = %v, %v", sums, err)
	}
	seen := map[string]bool{sums[0]: true, sums[1]: true}
	if !seen[a.SHA256] || !seen[b.SHA256] {
		t.Fatalf("sums = %v, want %s and %s", sums, a.SHA256, b.SHA256)
	}
	stale := filepath.Join(s.Root(), "tmp", "upload-stale")
	os.WriteFile(stale, []byte("x"), 0o600)
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(stale, old, old)
	fresh := filepath.Join(s.Root(), "tmp", "upload-fresh")
	os.WriteFile(fresh, []byte("x"), 0o600)
	n, err := s.CleanTemp(time.Now().Add(-time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("CleanTemp = %d, %v", n, err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatal("fresh temporary file removed")
	}
}
