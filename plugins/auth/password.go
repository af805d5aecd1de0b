package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// HashParams are argon2id's costs. Each hash stores the ones it was made
// with, so raising them upgrades a user's hash at their next login.
type HashParams struct {
	// Time is the number of passes over the memory.
	Time uint32
	// MemoryKiB is the memory each hash takes, in KiB.
	MemoryKiB uint32
	// Threads is the parallelism.
	Threads uint8
}

// DefaultHash is one of the argon2id settings OWASP's password storage
// guidance lists (19 MiB, 2 passes, 1 thread): about 30 ms per hash on
// the two cores the benchmarks ran on (docs/benchmarks.md), and little
// memory, so that MaxHashing hashes at once stay small.
var DefaultHash = HashParams{Time: 2, MemoryKiB: 19 * 1024, Threads: 1}

// Bounds on the costs a stored hash may ask for, so a tampered row
// cannot make a login take the machine.
const (
	maxHashTime      = 16
	maxHashMemoryKiB = 1 << 20
	saltBytes        = 16
	keyBytes         = 32
)

func (p HashParams) orDefault() HashParams {
	if p == (HashParams{}) {
		return DefaultHash
	}
	return p
}

func (p HashParams) valid() error {
	if p.Time < 1 || p.Time > maxHashTime || p.MemoryKiB < 8*uint32(max(p.Threads, 1)) ||
		p.MemoryKiB > maxHashMemoryKiB || p.Threads < 1 {
		return fmt.Errorf("argon2id costs out of range: time %d (1 to %d), memory %d KiB (8 per thread to %d), threads %d (at least 1)",
			p.Time, maxHashTime, p.MemoryKiB, maxHashMemoryKiB, p.Threads)
	}
	return nil
}

var b64 = base64.RawStdEncoding

// hashPassword returns the PHC string of password under p:
// $argon2id$v=19$m=...,t=...,p=...$salt$key.
func hashPassword(password string, p HashParams) (string, error) {
	salt := make([]byte, saltBytes)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, p.Time, p.MemoryKiB, p.Threads, keyBytes)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.MemoryKiB, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// storedHash is a parsed PHC string.
type storedHash struct {
	params    HashParams
	salt, key []byte
}

var errBadHash = errors.New("stored password hash is malformed")

func parseHash(s string) (storedHash, error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return storedHash{}, errBadHash
	}
	var h storedHash
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &h.params.MemoryKiB, &h.params.Time, &h.params.Threads); err != nil {
		return storedHash{}, errBadHash
	}
	if err := h.params.valid(); err != nil {
		return storedHash{}, fmt.Errorf("%w: %w", errBadHash, err)
	}
	var err1, err2 error
	h.salt, err1 = b64.DecodeString(parts[4])
	h.key, err2 = b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(h.salt) < 8 || len(h.key) < 16 || len(h.key) > 64 {
		return storedHash{}, errBadHash
	}
	return h, nil
}

// matches reports whether password hashes to h, comparing in constant time.
func (h storedHash) matches(password string) bool {
	key := argon2.IDKey([]byte(password), h.salt, h.params.Time, h.params.MemoryKiB, h.params.Threads, uint32(len(h.key)))
	return subtle.ConstantTimeCompare(key, h.key) == 1
}

// dummyHash is what a login that names no user is checked against, so
// that it takes as long as one that does.
func dummyHash(p HashParams) storedHash {
	return storedHash{params: p, salt: make([]byte, saltBytes), key: make([]byte, keyBytes)}
}
