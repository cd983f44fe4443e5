package protoload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"
	rgrpc "google.golang.org/grpc/reflection/grpc_reflection_v1"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	v1alphagrpc "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/grpctest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const inventory = "portico.inventory.v1.InventoryService"


func writeSet(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "set.binpb")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadFile(t *testing.T) {
	good, err := proto.Marshal(SetOf(inventoryv1.File_portico_inventory_v1_inventory_proto))
	if err != nil {
		t.Fatal(err)
	}
	lonely, _ := proto.Marshal(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(inventoryv1.File_portico_inventory_v1_inventory_proto)}})
	oversized := writeSet(t, nil)
	if err := os.Truncate(oversized, MaxFileBytes+1); err != nil { // sparse: nothing written
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		service    string
		wantErr    string
	}{
		{"good", writeSet(t, good), inventory, ""},
		{"truncated", writeSet(t, good[:len(good)/2]), inventory, "corrupt or truncated"},
		{"corrupt", writeSet(t, []byte("not a descriptor set at all")), inventory, "corrupt or truncated"},
		{"empty", writeSet(t, nil), inventory, "holds no files"},
		{"oversized", oversized, inventory, "larger than 16777216 bytes"},
		{"missing", filepath.Join(t.TempDir(), "none.binpb"), inventory, "no such file"},
		{"missing import", writeSet(t, lonely), inventory, "which the set does not hold"},
		{"service absent", writeSet(t, good), "acme.shipping.v1.ShippingService", "service not found: acme.shipping.v1.ShippingService"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := ReadFile(tt.path)
			if err == nil {
				_, err = Services(files, []string{tt.service})
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ReadFile = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

type inventoryStub struct {
	inventoryv1.UnimplementedInventoryServiceServer
}

func TestReflect(t *testing.T) {
	v1 := func() *grpc.Server {
		s := grpc.NewServer()
		inventoryv1.RegisterInventoryServiceServer(s, inventoryStub{})
		reflection.RegisterV1(s)
		return s
	}
	alpha := func() *grpc.Server {
		s := grpc.NewServer()
		inventoryv1.RegisterInventoryServiceServer(s, inventoryStub{})
		v1alphagrpc.RegisterServerReflectionServer(s, reflection.NewServer(reflection.ServerOptions{Services: s}))
		return s
	}
	none := func() *grpc.Server {
		s := grpc.NewServer()
		inventoryv1.RegisterInventoryServiceServer(s, inventoryStub{})
		return s
	}
	liar := func() *grpc.Server {
		s := grpc.NewServer()
		rgrpc.RegisterServerReflectionServer(s, lyingServer{})
		return s
	}
	slow := func() *grpc.Server {
		s := grpc.NewServer()
		rgrpc.RegisterServerReflectionServer(s, slowServer{})
		return s
	}
	tests := []struct {
		name    string
		srv     func() *grpc.Server
		service string
		lim     Limits
		wantErr string
	}{
		{"v1", v1, inventory, Limits{}, ""},
		{"v1alpha fallback", alpha, inventory, Limits{}, ""},
		{"no reflection", none, inventory, Limits{}, "Unimplemented"},
		{"service absent", v1, "acme.shipping.v1.ShippingService", Limits{}, "service acme.shipping.v1.ShippingService: the server answered NotFound"},
		{"huge", v1, inventory, Limits{MaxBytes: 1000}, "more than 1000 bytes"},
		{"many files", v1, inventory, Limits{MaxFiles: 2}, "more than 2 files"},
		{"names files it never sends", liar, inventory, Limits{}, "imports acme/missing.proto"},
		{"slow", slow, inventory, Limits{Timeout: 50 * time.Millisecond}, "no answer within 50ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc := grpctest.Serve(t, tt.srv())
			files, err := Reflect(context.Background(), cc, []string{tt.service}, tt.lim)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Reflect = %v", err)
				}
				sds, err := Services(files, []string{tt.service})
				if err != nil || sds[0].Methods().ByName("GetItem") == nil {
					t.Fatalf("Services = %v, %v", sds, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Reflect error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestReflectDown(t *testing.T) {
	cc := grpctest.Serve(t, grpc.NewServer())
	_ = cc.Close()
	if _, err := Reflect(context.Background(), cc, []string{inventory}, Limits{}); err == nil {
		t.Fatal("Reflect on a closed connection = nil error")
	}
}

// lyingServer answers every symbol with a file importing one it never
// sends.
type lyingServer struct {
	rgrpc.UnimplementedServerReflectionServer
}

func (lyingServer) ServerReflectionInfo(stream rgrpc.ServerReflection_ServerReflectionInfoServer) error {
	fd, _ := proto.Marshal(&descriptorpb.FileDescriptorProto{Name: proto.String("acme/x.proto"), Dependency: []string{"acme/missing.proto"}})
	for {
		req, err := stream.Recv()
		if err != nil {
			return nil
		}
		resp := &rpb.ServerReflectionResponse{MessageResponse: &rpb.ServerReflectionResponse_FileDescriptorResponse{
			FileDescriptorResponse: &rpb.FileDescriptorResponse{FileDescriptorProto: [][]byte{fd}}}}
		if req.GetFileByFilename() != "" {
			resp.MessageResponse = &rpb.ServerReflectionResponse_ErrorResponse{ErrorResponse: &rpb.ErrorResponse{ErrorCode: 5, ErrorMessage: "not found"}}
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}

// slowServer never answers.
type slowServer struct {
	rgrpc.UnimplementedServerReflectionServer
}

func (slowServer) ServerReflectionInfo(stream rgrpc.ServerReflection_ServerReflectionInfoServer) error {
	<-stream.Context().Done()
	return stream.Context().Err()
}

func TestServicesError(t *testing.T) {
	files, err := NewFiles(SetOf(inventoryv1.File_portico_inventory_v1_inventory_proto).GetFile())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Services(files, []string{"portico.inventory.v1.Item"}); !errors.Is(err, ErrNoService) {
		t.Errorf("Services(a message) = %v, want ErrNoService", err)
	}
}
