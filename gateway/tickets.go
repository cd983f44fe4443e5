package gateway

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/jsonwire"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/gateway/route"
	"github.com/portico-gateway/portico/interceptors/identity"
)

// TicketsPath is where an authenticated caller asks for a stream ticket:
// POST {"path": "/api/orders/ord-1:watch"} answers {"ticket", "url",
// "expireTime"}; GET url then opens that stream as the caller, once. A
// browser's EventSource sends no Authorization header, so this is how it
// authenticates (package auth, Tickets).
const TicketsPath = auth.TicketsPath

// ticketLabel derives the tickets' key from the identity keys.
const ticketLabel = "portico stream tickets v1"

// maxTicketRequest bounds the body of POST /api/stream-tickets.
const maxTicketRequest = 4 << 10

// newTicketKey is the process's own ticket key, used without an identity
// section: the tickets of one edge then open streams at that edge only.
func newTicketKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails (crypto/rand)
	return k
}

// ticketsFor returns the stream tickets of sn: signed with a key derived
// from the identity keys, which every edge of a deployment shares (or the
// process's own key without them), single-use through sn's nonce store
// (shared through Redis with redis.url).
func (s *Server) ticketsFor(sn *snapshot, keys *identity.Keys) *auth.Tickets {
	t := &auth.Tickets{Keys: [][]byte{s.ticketKey}, Nonces: sn.nonces, TTL: sn.cfg.Streams.TicketTTL}
	if keys != nil {
		t.Keys = keys.DeriveEach(ticketLabel)
	}
	return t
}

// authenticate returns the caller of r: by its stream ticket when the
// query has one, else by sn's authenticator.
func (s *Server) authenticate(sn *snapshot, r *http.Request) (auth.Principal, error) {
	if !auth.HasTicket(r.URL.RawQuery) {
		return sn.auth.Authenticate(r)
	}
	p, err := sn.tickets.Load().Authenticate(r)
	if err == nil {
		// The route binds the query without the ticket, and nothing
		// after this step (access line, span, upstream) sees it.
		r.URL.RawQuery = auth.StripTicket(r.URL.RawQuery)
		r.RequestURI = r.URL.RequestURI()
	}
	return p, err
}

// ticketRequest is the body of POST /api/stream-tickets.
type ticketRequest struct {
	// Path is the stream to open, as it will be requested: escaped,
	// without a query.
	Path string `json:"path"`
}

// ticketAnswer is its answer.
type ticketAnswer struct {
	Ticket     string `json:"ticket"`
	URL        string `json:"url"`
	ExpireTime string `json:"expireTime"`
}

// serveTicket answers POST /api/stream-tickets for the authenticated
// caller p: the body is read by the rules of every JSON body (readBody:
// 413, 415, 400 with errors[] naming the field), then 400 for a path
// that is not one, 404 when no streaming
// route is at the path, 403 when p may not open it.
func (s *Server) serveTicket(w *responseWriter, r *http.Request, p auth.Principal) {
	sn := w.ex.snap
	if r.Method != http.MethodPost {
		pr := problem.New(problem.CodeMethodNotAllowed, r.Method+" is not allowed on "+TicketsPath+".")
		pr.Allow = []string{http.MethodPost}
		s.writeProblem(w, r, pr)
		return
	}
	u, pr := s.ticketPath(w, r)
	if pr != nil {
		s.writeProblem(w, r, pr)
		return
	}
	path := u.EscapedPath() // the path as sent: ticketPath checked they agree
	rt, _ := sn.table.Match(http.MethodGet, u.Path)
	if rt == nil || !sn.endpoints[rt].Stream {
		s.writeProblem(w, r, problem.New(problem.CodeRouteNotFound, "No stream is at "+path+"; a ticket opens a stream (GET ...:watch, GET ...:export)."))
		return
	}
	if !sn.policy.Allowed(p, rt) {
		s.refuseAuth(w, r, forbidden(p, &http.Request{Method: http.MethodGet, URL: u}, sn.policy.Roles(rt)))
		return
	}
	tk, exp, err := sn.tickets.Load().Issue(p, path)
	if err != nil {
		s.writeProblem(w, r, problem.New(problem.CodeInternal, "The gateway could not issue a ticket."))
		return
	}
	writeJSON(w, http.StatusOK, ticketAnswer{Ticket: tk, ExpireTime: exp.UTC().Format(time.RFC3339),
		URL: path + "?" + auth.TicketParam + "=" + url.QueryEscape(tk)})
}

// ticketRequestDescriptor describes ticketRequest as a message, so that
// its body is read and explained by the edge's one JSON reader (readBody,
// jsonwire.Check): unknown fields, wrong types and bad JSON are the same
// problems, with the same errors[] pointers, as on any other body.
var ticketRequestDescriptor = sync.OnceValue(func() protoreflect.MessageDescriptor {
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: proto.String("portico/edge/stream_tickets.proto"), Package: proto.String("portico.edge"),
		Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("StreamTicketRequest"),
			Field: []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String("path"), JsonName: proto.String("path"), Number: proto.Int32(1),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
				Type:  descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
			}},
		}},
	}, nil)
	if err != nil {
		panic("gateway: the stream ticket request descriptor: " + err.Error()) // a constant: a test builds it
	}
	return fd.Messages().Get(0)
})

// ticketEndpoint is the endpoint readBody reads a ticket request as.
var ticketEndpoint = sync.OnceValue(func() *endpoint {
	return &endpoint{Route: &route.Route{Input: ticketRequestDescriptor(), Body: "*"}, maxBody: maxTicketRequest}
})

// ticketPath reads the body of POST /api/stream-tickets and returns its
// path, or the problem with it: the body's problems as on any JSON body,
// then 400 naming path (#/path) when it is missing or is not an escaped
// path under /api/ without a query or fragment.
func (s *Server) ticketPath(w *responseWriter, r *http.Request) (*url.URL, *problem.Problem) {
	data, p := readBody(w, r, ticketEndpoint())
	if p != nil {
		return nil, p
	}
	if len(data) == 0 {
		return nil, memberProblem("path", "required: the stream to open, such as /api/orders/ord-1:watch")
	}
	if _, err := jsonwire.Check(ticketRequestDescriptor(), data); err != nil {
		return nil, bodyProblem(err)
	}
	var req ticketRequest
	if err := json.Unmarshal(data, &req); err != nil { // Check accepted it: cannot fail
		return nil, bodyProblem(err)
	}
	if req.Path == "" {
		return nil, memberProblem("path", "required: the stream to open, such as /api/orders/ord-1:watch")
	}
	u, err := url.Parse(req.Path)
	if err != nil || !strings.HasPrefix(req.Path, "/api/") || u.RawQuery != "" || u.Fragment != "" || u.EscapedPath() != req.Path {
		return nil, memberProblem("path", "must be an escaped path under /api/ without a query, such as /api/orders/ord-1:watch")
	}
	return u, nil
}
