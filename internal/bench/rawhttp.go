package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// rawSender is the send and inbox phases' load generator: one keep-alive HTTP/1.1
// connection to the gateway on which it writes each request with a
// pre-encoded header and body and reads the answer with http.ReadResponse.
// It spends a fraction of what net/http's client does per request (no
// connection pool, no reader and writer goroutines, no JSON encoding), so
// the measured CPU per mail is mostly the gateway's. It is not safe for
// concurrent use; each sender goroutine has its own.
type rawSender struct {
	addr   string
	path   string
	token  string
	conn   net.Conn
	br     *bufio.Reader
	head   []byte // request line and headers up to Content-Length's value
	prefix []byte // the JSON body before the subject's number
	suffix []byte // the JSON body after it
	buf    []byte
}

// newRawSender prepares POST path with bearer token (none when token is
// ""); each send's body is prefix + n + suffix, n given per call (a JSON
// body with a number in it).
func newRawSender(gatewayURL, path, token string, prefix, suffix []byte) (*rawSender, error) {
	addr := strings.TrimPrefix(gatewayURL, "http://")
	if addr == gatewayURL {
		return nil, fmt.Errorf("bench: the load generator speaks plain http, not %q", gatewayURL)
	}
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	head := "POST " + path + " HTTP/1.1\r\nHost: " + addr + "\r\n" + auth +
		"Content-Type: application/json\r\nAccept: application/json\r\nContent-Length: "
	return &rawSender{addr: addr, path: path, token: token, head: []byte(head), prefix: prefix, suffix: suffix}, nil
}

// get sends GET pathAndQuery on the sender's connection and answers the
// status and the body of the answer (the inbox phase: the body is read
// whole but not decoded, which would time the load generator's JSON work).
func (r *rawSender) get(pathAndQuery string) (int, []byte, error) {
	b := append(r.buf[:0], "GET "+pathAndQuery+" HTTP/1.1\r\nHost: "+r.addr+"\r\nAuthorization: Bearer "+r.token+
		"\r\nAccept: application/json\r\n\r\n"...)
	r.buf = b
	for attempt := 0; ; attempt++ {
		status, body, err := r.roundTrip(b)
		if err == nil || attempt == 1 {
			return status, body, err
		}
		r.close()
	}
}

// send posts the body with number n and answers the status and the body of
// the answer. A connection the gateway closed is dialled again once.
func (r *rawSender) send(n int) (int, []byte, error) {
	num := strconv.AppendInt(nil, int64(n), 10)
	size := len(r.prefix) + len(num) + len(r.suffix)
	b := append(r.buf[:0], r.head...)
	b = strconv.AppendInt(b, int64(size), 10)
	b = append(b, "\r\n\r\n"...)
	b = append(b, r.prefix...)
	b = append(b, num...)
	b = append(b, r.suffix...)
	r.buf = b
	for attempt := 0; ; attempt++ {
		status, body, err := r.roundTrip(b)
		if err == nil || attempt == 1 {
			return status, body, err
		}
		r.close() // a stale keep-alive connection: dial again
	}
}

func (r *rawSender) roundTrip(req []byte) (int, []byte, error) {
	if r.conn == nil {
		c, err := net.DialTimeout("tcp", r.addr, 10*time.Second)
		if err != nil {
			return 0, nil, err
		}
		r.conn, r.br = c, bufio.NewReaderSize(c, 4096)
	}
	if _, err := r.conn.Write(req); err != nil {
		return 0, nil, err
	}
	resp, err := http.ReadResponse(r.br, nil)
	if err != nil {
		return 0, nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, nil, err
	}
	if resp.Close {
		r.close()
	}
	return resp.StatusCode, body, nil
}

func (r *rawSender) close() {
	if r.conn != nil {
		r.conn.Close()
		r.conn, r.br = nil, nil
	}
}

// jsonString answers s as a JSON string literal.
func jsonString(s string) []byte {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.Bytes()
}
