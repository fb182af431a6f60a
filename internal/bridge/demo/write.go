package demo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentmail/agentmail/internal/pathwalk"
)

// WriteRequest is one write line of a mail.
type WriteRequest struct {
	// Path is the file as the mail names it, relative to the working
	// directory.
	Path string
	// Content is the rest of the line; the file gets it and a newline.
	Content string
	// Refused, when not "", says why the line is not acted on (too many
	// write lines, content too long); the path was not looked at.
	Refused Refusal
}

// ParseWrites finds the write lines among the first 200 lines of body: a
// line that, trimmed, starts with "write " (any case) and holds a colon
// (":" or the full-width "：") after the path:
//
//	write hello.txt: Hello, world
//	write notes/todo.md: buy milk
//
// The path is the trimmed text before the first colon, the content the
// text after it, one leading space dropped. At most MaxWrites lines are
// acted on; the ones after that, and a content longer than MaxContent
// bytes, come back with Refused set. Lines without a colon are not write
// lines.
func ParseWrites(body string) []WriteRequest {
	var out []WriteRequest
	lines := strings.SplitN(body, "\n", scanLines+1)
	if len(lines) > scanLines {
		lines = lines[:scanLines]
	}
	n := 0
	for _, line := range lines {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if len(line) < 6 || !strings.EqualFold(line[:6], "write ") {
			continue
		}
		rest := line[6:]
		i := strings.IndexAny(rest, ":：")
		if i < 0 {
			continue
		}
		_, size := utf8.DecodeRuneInString(rest[i:])
		w := WriteRequest{Path: strings.TrimSpace(rest[:i]), Content: strings.TrimPrefix(rest[i+size:], " ")}
		if w.Path == "" {
			continue
		}
		n++
		switch {
		case n > MaxWrites:
			w.Refused = refTooMany
		case len(w.Content) > MaxContent:
			w.Refused = refContent
		}
		out = append(out, w)
	}
	return out
}

// Refusal names why a write line is not acted on; Error is its English
// text (refusals holds both languages).
type Refusal string

// The refusals of ParseWrites and Confine.
const (
	refTooMany    Refusal = "too-many"
	refContent    Refusal = "content"
	refEmpty      Refusal = "empty"
	refLong       Refusal = "long"
	refAbsolute   Refusal = "absolute"
	refCharacters Refusal = "characters"
	refDotDot     Refusal = "dotdot"
	refHidden     Refusal = "hidden"
	refNotInside  Refusal = "not-inside"
	refLink       Refusal = "link"
	refKept       Refusal = "kept"
	refNoFolder   Refusal = "no-folder"
	refNotFile    Refusal = "not-file"
	refExists     Refusal = "exists"
)

// refusals words each Refusal in English and Chinese.
var refusals = map[Refusal][2]string{
	refTooMany:    {fmt.Sprintf("only the first %d write lines of a mail are acted on", MaxWrites), fmt.Sprintf("一封邮件只处理前 %d 行写入请求", MaxWrites)},
	refContent:    {fmt.Sprintf("the content is longer than %d bytes", MaxContent), fmt.Sprintf("内容超过 %d 字节", MaxContent)},
	refEmpty:      {"the path is empty", "路径为空"},
	refLong:       {fmt.Sprintf("the path is longer than %d bytes", MaxPath), fmt.Sprintf("路径超过 %d 字节", MaxPath)},
	refAbsolute:   {"the path is absolute; write a path inside the working directory", "这是绝对路径；请写工作目录里的相对路径"},
	refCharacters: {"the path holds a backslash, a control character or an invisible character", "路径含有反斜杠、控制字符或不可见字符"},
	refDotDot:     {"the path leaves the working directory (..)", "路径离开了工作目录（..）"},
	refHidden:     {"names starting with a dot (.git, .ssh, …) are not written", "不写入以点开头的名称（.git、.ssh 等）"},
	refNotInside:  {"the path does not name a file inside the working directory", "路径指的不是工作目录里的文件"},
	refLink:       {"a symbolic link is on the path; links are not followed", "路径上有符号链接；不会跟随链接"},
	refKept:       {"the path is inside a folder the bridge keeps to itself (keys, the gateway's data)", "路径位于桥接程序保留的目录里（密钥、网关数据）"},
	refNoFolder:   {"its folder does not exist; folders are not created", "所在目录不存在；不会创建目录"},
	refNotFile:    {"the path names something that is not a regular file", "路径指向的不是普通文件"},
	refExists:     {"a file of that name exists; the demo only creates new files", "同名文件已存在；演示智能体只创建新文件"},
}

// Error answers the refusal's English text.
func (r Refusal) Error() string { return refusals[r][0] }

// in answers the refusal in language lang ("en" or "zh").
func (r Refusal) in(lang string) string {
	if lang == "zh" {
		return refusals[r][1]
	}
	return refusals[r][0]
}

func refuse(r Refusal) error { return r }

// errLink ends a walk at the first symbolic link.
var errLink = errors.New("a symbolic link is on the way")

// Confine answers the absolute path at which name, relative to the
// working directory cwd, would be written, or why it may not be. Refused:
// an empty, absolute or too long name (over MaxPath bytes), control or
// invisible format characters, a backslash, a ".." component, a component
// starting with "." (.git, .ssh, .agentmail), a symbolic link anywhere
// below cwd, a parent directory that does not exist (none is created), any
// existing entry (the demo creates new files only, so an approved mail
// can never overwrite a database, a key or a source file in the
// directory), anything inside hidden, and anything in or below a folder
// holding a gateway's database (inGatewayData).
// cwd itself may be reached through links; the answer is below its
// resolved form.
func Confine(cwd, name string, hidden []string) (string, error) {
	switch {
	case name == "":
		return "", refuse(refEmpty)
	case len(name) > MaxPath:
		return "", refuse(refLong)
	case filepath.IsAbs(name):
		return "", refuse(refAbsolute)
	case strings.ContainsFunc(name, func(r rune) bool {
		return r == '\\' || r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
	}):
		return "", refuse(refCharacters)
	}
	for _, c := range strings.Split(name, "/") {
		switch {
		case c == "." || c == "":
			continue
		case c == "..":
			return "", refuse(refDotDot)
		case strings.HasPrefix(c, "."):
			return "", refuse(refHidden)
		}
	}
	root, err := pathwalk.Resolve(cwd, 40, nil)
	if err != nil {
		return "", fmt.Errorf("the working directory cannot be resolved: %w", err)
	}
	target := filepath.Join(root, filepath.Clean(name))
	if rel, err := filepath.Rel(root, target); err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", refuse(refNotInside)
	}
	if _, err := pathwalk.Resolve(target, 0, func(string, os.FileInfo) error { return errLink }); err != nil {
		if errors.Is(err, errLink) {
			return "", refuse(refLink)
		}
		return "", err
	}
	for _, h := range hidden {
		if h != "" && (target == h || strings.HasPrefix(target, strings.TrimSuffix(h, "/")+"/")) {
			return "", refuse(refKept)
		}
	}
	if fi, err := os.Stat(filepath.Dir(target)); err != nil || !fi.IsDir() {
		return "", refuse(refNoFolder)
	}
	if inGatewayData(root, filepath.Dir(target)) {
		return "", refuse(refKept)
	}
	if fi, err := os.Lstat(target); err == nil && !fi.Mode().IsRegular() {
		return "", refuse(refNotFile)
	} else if err == nil {
		return "", refuse(refExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return target, nil
}

// gatewayDataFiles are the names that mark a gateway's data directory
// (its SQLite database and the lock the running gateway holds).
var gatewayDataFiles = []string{"agentmail.db", "agentmail.db.lock"}

// inGatewayData reports whether dir, or a directory between it and root
// (both included), holds a gateway's database: the demo runs in the
// README's checkout, where the gateway keeps ./data, and the bridge may
// not have been told where that is (AGENTMAIL_DATA_DIR, the hidden paths).
func inGatewayData(root, dir string) bool {
	for {
		for _, name := range gatewayDataFiles {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				return true
			}
		}
		if dir == root || len(dir) <= len(root) {
			return false
		}
		dir = filepath.Dir(dir)
	}
}

// writeInside writes content to name below cwd through an os.Root, so that
// the write cannot leave the directory even if the tree changed after
// Confine (a link planted since then is followed only within it). The
// file must be new (O_EXCL): one created since Confine is left alone and
// answered as refExists. It answers the bytes written.
func writeInside(cwd, name string, content []byte) (int, error) {
	dir, err := pathwalk.Resolve(cwd, 40, nil)
	if err != nil {
		return 0, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	f, err := root.OpenFile(filepath.Clean(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return 0, refuse(refExists)
	}
	if err != nil {
		return 0, err
	}
	n, err := f.Write(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}
