package bridge

import "errors"

// ErrUnsupported is returned by optional Adapter methods the platform lacks.
var ErrUnsupported = errors.New("bridge: not supported by this platform")

// ErrSessionNotFound is returned (wrapped) by Adapter.RunTurn when
// TurnRequest.PlatformSessionID names a platform session that no longer
// exists (deleted, or the platform lost it). The core then starts a new
// platform session for the mail (B-3 step 3: "otherwise create a new one")
// and binds it to the mail session again. It is never used for a decision
// delivered after a restart (B-4.3): that one is logged and dropped instead.
var ErrSessionNotFound = errors.New("bridge: platform session not found")
