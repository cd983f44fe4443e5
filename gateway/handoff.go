package gateway

import (
	"net"
	"sync"
)

// handoff is a net.Listener that yields the connections a front gives it.
type handoff struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newHandoff(addr net.Addr) *handoff {
	return &handoff{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

// give passes c to Accept; false once the handoff is closed.
func (h *handoff) give(c net.Conn) bool {
	select {
	case <-h.done:
		return false
	default:
	}
	select {
	case h.conns <- c:
		return true
	case <-h.done:
		return false
	}
}

func (h *handoff) Accept() (net.Conn, error) {
	select {
	case c := <-h.conns:
		return c, nil
	case <-h.done:
		return nil, net.ErrClosed
	}
}

func (h *handoff) Close() error {
	h.once.Do(func() { close(h.done) })
	return nil
}

func (h *handoff) Addr() net.Addr { return h.addr }
