package adminapi

import (
	"context"
	"fmt"
	"sync"

	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// anonymous is the name the stream limits count callers without a
// credential under (an open API).
const anonymous = "anonymous"

// streamLimits counts the open streams (GET /api/events/stream and POST
// /api/chat/stream together: each holds a connection past the server's
// write timeout), per credential and in all. Safe for concurrent use.
type streamLimits struct {
	perCredential, total int

	mu    sync.Mutex
	open  map[string]int // by credential name
	count int
}

func newStreamLimits(opts Options) *streamLimits {
	l := &streamLimits{perCredential: opts.MaxStreamsPerCredential, total: opts.MaxStreams, open: map[string]int{}}
	if l.perCredential <= 0 {
		l.perCredential = DefaultMaxStreamsPerCredential
	}
	if l.total <= 0 {
		l.total = DefaultMaxStreams
	}
	return l
}

// acquire takes a stream for the caller ctx carries, or refuses it with
// KindTooMany naming the limit. The caller calls release once the stream
// ends.
func (l *streamLimits) acquire(ctx context.Context) (release func(), err error) {
	who := anonymous
	if p := smshttp.PrincipalFrom(ctx); p.Authenticated {
		who = "credential " + p.Name
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count >= l.total {
		return nil, smshttp.NewError(smshttp.KindTooMany, fmt.Sprintf(
			"the kernel already serves %d streams (event and chat streams together), its limit: retry once one has closed", l.total))

	}
	if l.open[who] >= l.perCredential {
		return nil, smshttp.NewError(smshttp.KindTooMany, fmt.Sprintf(
			"%s already holds %d streams (event and chat streams together), the limit per credential: close one first", who, l.perCredential))

	}
	l.open[who]++
	l.count++
	return sync.OnceFunc(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.count--
		if l.open[who]--; l.open[who] == 0 {
			delete(l.open, who)
		}
	}), nil
}
