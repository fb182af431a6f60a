package bridge

import "errors"

// ErrUnsupported is returned by optional Adapter methods the platform lacks.
var ErrUnsupported = errors.New("bridge: not supported by this platform")
