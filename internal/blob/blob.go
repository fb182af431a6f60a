// Package blob stores attachment contents on disk, addressed by their SHA-256
// (W-8, seed 001 "attachments"): the same content uploaded twice takes the
// space once, and the database keeps only metadata (filename, declared type,
// uploader) that points at a blob by its hash.
//
// Layout under the root directory:
//
//	<root>/sha256/<first two hex digits>/<64 hex digits>   one file per content
//	<root>/tmp/upload-*                                    uploads being written
//
// Writes stream into a temporary file in the same file system while the hash
// and the size are measured, then rename atomically onto the final name, so a
// reader never sees a half-written blob and a failed or oversize upload leaves
// nothing behind.
package blob

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrTooLarge is returned by Put when the content is longer than the limit it
// was given. Nothing is left on disk. The HTTP layer maps it to 413.
var ErrTooLarge = errors.New("blob: content exceeds the size limit")

// ErrNotFound is returned by Open and Stat for a hash that has no blob.
var ErrNotFound = errors.New("blob: no content with that sha256")

// ErrBadSum is returned for a hash that is not 64 lowercase hex digits.
var ErrBadSum = errors.New("blob: sha256 must be 64 lowercase hex digits")

// ReadError is returned by Put when reading the content failed (the client
// went away, or the body was cut short); Err is the reader's error, so
// errors.As finds e.g. *http.MaxBytesError through it. Nothing is stored.
type ReadError struct{ Err error }

// Error names the cause.
func (e *ReadError) Error() string { return "blob: read content: " + e.Err.Error() }

// Unwrap answers the reader's error.
func (e *ReadError) Unwrap() error { return e.Err }

// readErrorReader marks errors of the source so Put can tell them from
// write errors of the disk.
type readErrorReader struct{ r io.Reader }

func (r readErrorReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = &ReadError{Err: err}
	}
	return n, err
}

// Store is a content-addressed file store rooted at one directory. It is safe
// for concurrent use by several goroutines and by several processes sharing
// the directory (every write is a rename onto a name derived from the bytes).
type Store struct {
	root string
}

// Info describes a stored blob: SHA256 is the lowercase hex digest of the
// content, Size its length in bytes.
type Info struct {
	SHA256 string
	Size   int64
}

// Open returns a Store rooted at dir, creating dir/sha256 and dir/tmp (mode
// 0700) when missing. It fails when the directories cannot be created.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("blob: the attachment directory must not be empty")
	}
	for _, sub := range []string{"sha256", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, fmt.Errorf("blob: create %s: %w", filepath.Join(dir, sub), err)
		}
	}
	return &Store{root: dir}, nil
}

// Root is the directory the store was opened on.
func (s *Store) Root() string { return s.root }

// ValidSum reports whether sum is a well-formed SHA-256 digest: 64 lowercase
// hex digits.
func ValidSum(sum string) bool {
	if len(sum) != 64 {
		return false
	}
	for i := 0; i < len(sum); i++ {
		c := sum[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// path is the final location of the blob with digest sum (already validated).
func (s *Store) path(sum string) string {
	return filepath.Join(s.root, "sha256", sum[:2], sum)
}

// Put streams r into the store and returns the content's digest and size.
// limit is the largest accepted size in bytes (limit <= 0 means no limit); it
// is measured while streaming, never by reading the whole content into
// memory. Beyond the limit Put stops reading and returns ErrTooLarge. On any
// error the temporary file is removed, so nothing is left on disk. When the
// same content is already stored, the new copy is discarded and the existing
// blob's modification time is refreshed (see RemoveIfIdle).
func (s *Store) Put(r io.Reader, limit int64) (Info, error) {
	tmp, err := os.CreateTemp(filepath.Join(s.root, "tmp"), "upload-*")
	if err != nil {
		return Info{}, fmt.Errorf("blob: create temporary file: %w", err)
	}
	tmpName := tmp.Name()
	committed := false
	defer func() {
		if !committed {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()

	h := sha256.New()
	var src io.Reader = readErrorReader{r}
	if limit > 0 {
		// One byte past the limit is enough to know it was exceeded.
		src = io.LimitReader(src, limit+1)
	}
	n, err := io.Copy(io.MultiWriter(tmp, h), src)
	var re *ReadError
	if errors.As(err, &re) {
		return Info{}, re
	}
	if err != nil {
		return Info{}, fmt.Errorf("blob: write content: %w", err)
	}
	if limit > 0 && n > limit {
		return Info{}, ErrTooLarge
	}
	if err := tmp.Sync(); err != nil {
		return Info{}, fmt.Errorf("blob: sync content: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return Info{}, fmt.Errorf("blob: close content: %w", err)
	}
	info := Info{SHA256: hex.EncodeToString(h.Sum(nil)), Size: n}
	final := s.path(info.SHA256)
	if err := os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
		return Info{}, fmt.Errorf("blob: create directory: %w", err)
	}
	if st, err := os.Stat(final); err == nil && st.Size() == n {
		// Same content already stored: keep one copy, mark it as fresh so a
		// concurrent sweep does not take it away from this new reference.
		now := time.Now()
		_ = os.Chtimes(final, now, now)
		return info, nil // deferred cleanup removes the temporary copy
	}
	if err := os.Rename(tmpName, final); err != nil {
		return Info{}, fmt.Errorf("blob: store content: %w", err)
	}
	committed = true
	return info, nil
}

// Open opens the blob with digest sum for reading. The caller closes it.
// Errors: ErrBadSum, ErrNotFound.
func (s *Store) Open(sum string) (*os.File, error) {
	if !ValidSum(sum) {
		return nil, ErrBadSum
	}
	f, err := os.Open(s.path(sum))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound
	}
	return f, err
}

// Stat returns the stored size of the blob with digest sum.
// Errors: ErrBadSum, ErrNotFound.
func (s *Store) Stat(sum string) (Info, error) {
	if !ValidSum(sum) {
		return Info{}, ErrBadSum
	}
	st, err := os.Stat(s.path(sum))
	if errors.Is(err, os.ErrNotExist) {
		return Info{}, ErrNotFound
	}
	if err != nil {
		return Info{}, err
	}
	return Info{SHA256: sum, Size: st.Size()}, nil
}

// Remove deletes the blob with digest sum. Removing a blob that is not there
// is not an error. The caller must know that no attachment refers to it.
func (s *Store) Remove(sum string) error {
	if !ValidSum(sum) {
		return ErrBadSum
	}
	err := os.Remove(s.path(sum))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// RemoveIfIdle deletes the blob with digest sum only when it was last written
// (or re-uploaded) before idleSince. A sweep that found no reference to sum
// uses it so that an upload of the same content racing with the sweep, which
// refreshes the blob's time in Put before its metadata row exists, keeps its
// content. It reports whether the blob was removed.
func (s *Store) RemoveIfIdle(sum string, idleSince time.Time) (bool, error) {
	if !ValidSum(sum) {
		return false, ErrBadSum
	}
	st, err := os.Stat(s.path(sum))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !st.ModTime().Before(idleSince) {
		return false, nil
	}
	if err := s.Remove(sum); err != nil {
		return false, err
	}
	return true, nil
}

// Sums lists the digests of every stored blob, in no particular order.
func (s *Store) Sums() ([]string, error) {
	var out []string
	base := filepath.Join(s.root, "sha256")
	err := filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && ValidSum(d.Name()) {
			out = append(out, d.Name())
		}
		return nil
	})
	return out, err
}

// CleanTemp removes temporary upload files older than before, left behind by
// a process that died mid-upload. It returns how many it removed.
func (s *Store) CleanTemp(before time.Time) (int, error) {
	dir := filepath.Join(s.root, "tmp")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "upload-") {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(before) {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			removed++
		}
	}
	return removed, nil
}
