package objectstoretest

import (
	"context"
	"io"
	"testing"

	"github.com/sms-baseline/sms/contracts"
)

// pattern is a reader of n bytes that allocates nothing per read, so the
// benchmarks count the store's own allocations.
type pattern struct{ left int64 }

func (p *pattern) Read(b []byte) (int, error) {
	if p.left <= 0 {
		return 0, io.EOF
	}
	n := min(int64(len(b)), p.left)
	for i := range b[:n] {
		b[i] = byte(i)
	}
	p.left -= n
	return int(n), nil
}

// BenchPutGet puts an object of size bytes and reads it back, once per
// iteration; B/op shows whether the store streams (flat) or buffers
// (growing with size).
func BenchPutGet(b *testing.B, st contracts.ObjectStore, size int64) {
	ctx := context.Background()
	buf := make([]byte, 32<<10)
	b.SetBytes(2 * size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Put(ctx, "bench/object", &pattern{left: size}, contracts.PutOptions{Size: size}); err != nil {
			b.Fatal(err)
		}
		_, rc, err := st.Get(ctx, "bench/object", contracts.GetOptions{})
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{rc}, buf)
		_ = rc.Close()
		if err != nil || n != size {
			b.Fatalf("read %d of %d bytes: %v", n, size, err)
		}
	}
}
