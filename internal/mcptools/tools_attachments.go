package mcptools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// checkPath resolves p against the workspace and turns a protected hit
// into a refusal made before anything else happens; an unresolvable path
// is a bad argument.
func (s *Server) checkPath(p string) (string, error) {
	r, err := s.protected.Check(s.cfg.Workspace, p)
	if err != nil {
		if r != "" {
			return "", &Refusal{Reason: err.Error()}
		}
		return "", badArg("path %q: %v", p, err)
	}
	return r, nil
}

func (s *Server) uploadAttachment(ctx context.Context, a args) (string, error) {
	p, err := a.required("path", "the local file to upload")
	if err != nil {
		return "", err
	}
	// Key files and the gateway's data must not leave the machine either.
	r, err := s.checkPath(p)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(r)
	if err != nil {
		return "", badArg("path %q: %v", p, err)
	}
	if !fi.Mode().IsRegular() {
		return "", badArg("path %q is not a regular file", p)
	}
	name, err := a.str("filename")
	if err != nil {
		return "", err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		name = filepath.Base(r)
	}
	f, err := os.Open(r)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", r, err)
	}
	defer f.Close()
	att, err := s.gateway().UploadAttachment(ctx, name, f)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Uploaded %s (%s): attachment_id %s. Pass it in send_mail's attachment_ids.\n", att.Filename, FormatSize(att.Size), att.AttachmentID), nil
}

// safeFilename turns an attachment's declared name into a plain file name.
func safeFilename(name, id string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." || name == "/" {
		return "attachment-" + id
	}
	return name
}

// freeName returns dir/name, or dir/"name (2).ext" and so on when taken.
func freeName(dir, name string) string {
	p := filepath.Join(dir, name)
	if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
		return p
	}
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 2; ; i++ {
		p = filepath.Join(dir, fmt.Sprintf("%s (%d)%s", stem, i, ext))
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			return p
		}
	}
}

func (s *Server) downloadAttachment(ctx context.Context, a args) (string, error) {
	id, err := a.required("attachment_id", "the id shown by read_inbox or read_mail")
	if err != nil {
		return "", err
	}
	p, err := a.str("path")
	if err != nil {
		return "", err
	}
	p = strings.TrimSpace(p)
	dir, target := s.cfg.Workspace, ""
	if p != "" {
		// Refuse a protected target before anything is fetched.
		r, err := s.checkPath(p)
		if err != nil {
			return "", err
		}
		if fi, err := os.Stat(r); err == nil && fi.IsDir() {
			dir = r
		} else {
			target = r
		}
	}
	body, meta, err := s.gateway().DownloadAttachment(ctx, id)
	if err != nil {
		return "", err
	}
	defer body.Close()
	if target == "" {
		target = freeName(dir, safeFilename(meta.Filename, id))
	}
	// Check the final name too (the directory case, and a name that
	// resolves through a link).
	r, err := s.checkPath(target)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(r), 0o755); err != nil {
		return "", fmt.Errorf("create the directory for %s: %w", r, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(r), ".agentmail-download-*")
	if err != nil {
		return "", fmt.Errorf("create a file next to %s: %w", r, err)
	}
	n, err := io.Copy(tmp, body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), r)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("save attachment %s to %s: %w", id, r, err)
	}
	return fmt.Sprintf("Saved attachment %s (%s) to %s\n", id, FormatSize(n), r), nil
}
