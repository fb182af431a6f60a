//go:build !unix

package cli

import "os"

// ownedByAnotherUser is false where the system keeps no numeric owner in
// the file's status (the mode checks of ensureOwnDir still apply).
func ownedByAnotherUser(fi os.FileInfo) bool { return false }

// linkOfAnotherUser is false where the system keeps no numeric owner in
// the file's status.
func linkOfAnotherUser(fi os.FileInfo) bool { return false }
