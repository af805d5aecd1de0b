package auth

import "testing"

// BenchmarkHashPassword is one argon2id hash at DefaultHash: what a login
// and a password change cost (docs/benchmarks.md).
func BenchmarkHashPassword(b *testing.B) {
	for b.Loop() {
		if _, err := hashPassword("correct horse battery staple", DefaultHash); err != nil {
			b.Fatal(err)
		}
	}
}
