package mcptools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxStdioLine is the largest JSON-RPC message `agentmail mcp` accepts on
// stdin, in bytes (one line, newline excluded). A longer line is answered
// -32600 and skipped.
const MaxStdioLine = 16 << 20

// StdioTransport is the stdio transport of `agentmail mcp`: the SDK's
// newline-delimited IOTransport behind a line filter, so that one bad line
// from a client never ends the server (issue 19 item 2). The SDK's reader
// stops at the first line it cannot decode; the filter answers such lines
// itself, as JSON-RPC 2.0 says, and passes only well-formed messages on:
//
//   - not JSON (garbage, truncated JSON): -32700 parse error, id null;
//   - JSON that is not one message object (an array, a number, a batch,
//     since the protocol versions served here have no batches), a missing
//     or wrong "jsonrpc":"2.0", an id that is not a string or a number, a
//     method that is not a string, an object that is neither a request nor
//     a response: -32600 invalid request, with the message's id when it
//     has a usable one, else null;
//   - a line longer than MaxStdioLine bytes: -32600, id null.
//
// Blank lines are skipped. Writes of the SDK and of the filter go through
// one lock, so answers never interleave on stdout. When stdin ends the SDK
// sees the end of its input and the server stops.
func StdioTransport(stdin io.Reader, stdout io.Writer, log *slog.Logger) mcp.Transport {
	if log == nil {
		log = slog.Default()
	}
	out := &lockedWriter{w: stdout}
	pr, pw := io.Pipe()
	go filterLines(stdin, pw, out, MaxStdioLine, log)
	// The filter bounds every line, so the SDK's own bound is not needed.
	return &mcp.IOTransport{Reader: pr, Writer: out, MaxLineLength: -1}
}

// lockedWriter serialises whole writes; each JSON-RPC message is one Write.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// filterLines copies the valid messages of in to pw, one per line, and
// answers the others on out. It closes pw at the end of in (or with the
// read error), and stops when the SDK closes its end of the pipe.
func filterLines(in io.Reader, pw *io.PipeWriter, out io.Writer, max int, log *slog.Logger) {
	r := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		tooLong := false
		if len(line)+len(chunk) > max+2 { // +2: "\r\n"
			tooLong = true
		} else {
			line = append(line, chunk...)
		}
		if tooLong {
			// Skip the rest of the line without keeping it.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			line = line[:0]
			log.Warn("mcp: stdin message too large", "limit_bytes", max)
			if werr := writeRPCError(out, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: message larger than %d bytes", max)); werr != nil {
				pw.CloseWithError(werr)
				return
			}
			if err != nil {
				pw.CloseWithError(eofAsNil(err))
				return
			}
			continue
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the line goes on
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if id, code, msg := checkMessage(line); code != 0 {
				log.Warn("mcp: malformed message on stdin", "code", code, "problem", msg)
				if werr := writeRPCError(out, id, code, msg); werr != nil {
					pw.CloseWithError(werr)
					return
				}
			} else {
				if line[len(line)-1] != '\n' {
					line = append(line, '\n')
				}
				if _, werr := pw.Write(line); werr != nil {
					return // the server stopped reading
				}
			}
		}
		line = line[:0]
		if err != nil {
			pw.CloseWithError(eofAsNil(err))
			return
		}
	}
}

func eofAsNil(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// checkMessage reports whether line is one JSON-RPC 2.0 message the SDK
// can take: code 0 when it is, else the JSON-RPC error code and message
// for the answer, with the id to answer to (nil: null).
func checkMessage(line []byte) (id json.RawMessage, code int, msg string) {
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return nil, jsonrpc.CodeParseError, fmt.Sprintf("parse error: the line is not valid JSON (%v)", err)
	}
	if line[0] == '[' {
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported; send one message per line"
	}
	if line[0] != '{' {
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: a JSON-RPC message must be a JSON object"
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
	rawID, hasID := m["id"]
	if hasID && !isNull(rawID) {
		switch rawID[0] {
		case '"':
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		default:
			return nil, jsonrpc.CodeInvalidRequest, "invalid request: \"id\" must be a string or a number"
		}
		id = rawID
	}
	if v, ok := m["jsonrpc"]; !ok || string(bytes.TrimSpace(v)) != `"2.0"` {
		return id, jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`
	}
	if method, ok := m["method"]; ok {
		var s string
		if json.Unmarshal(method, &s) != nil {
			return id, jsonrpc.CodeInvalidRequest, "invalid request: \"method\" must be a string"
		}
		if p, ok := m["params"]; ok && !isNull(p) && p[0] != '{' && p[0] != '[' {
			return id, jsonrpc.CodeInvalidRequest, "invalid request: \"params\" must be an object"
		}
		return nil, 0, ""
	}
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if id == nil || (!hasResult && !hasError) {
		return id, jsonrpc.CodeInvalidRequest, "invalid request: a message needs a \"method\" (request) or an \"id\" with \"result\" or \"error\" (response)"
	}
	return nil, 0, ""
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// writeRPCError writes one JSON-RPC error answer as a line.
func writeRPCError(w io.Writer, id json.RawMessage, code int, msg string) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: msg}})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
