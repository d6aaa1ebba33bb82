// Command reference-go is the grpc-go reference server for Benchmarks/run.
//
// It serves the unary method bench.v1.BenchService/Echo: request {"message": "..."}, response
// the same object. Messages are JSON: a codec named "json" is registered with grpc-go's
// encoding registry, so a request with content-type "application/grpc+json" selects it.
// The service is described by a hand-written grpc.ServiceDesc (no protoc).
//
// Build (offline, GOPATH mode, with Debian's golang-go and golang-google-grpc-dev):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode:$TMP go build -o reference-go main.go
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
)

// jsonCodec marshals messages with encoding/json.
type jsonCodec struct{}

func (jsonCodec) Marshal(v interface{}) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v interface{}) error { return json.Unmarshal(data, v) }
func (jsonCodec) Name() string                               { return "json" }

// EchoMessage is both the request and the response of Echo.
type EchoMessage struct {
	Message string `json:"message"`
}

// benchService is the interface the ServiceDesc's HandlerType names.
type benchService interface {
	Echo(ctx context.Context, req *EchoMessage) (*EchoMessage, error)
}

type server struct{}

func (server) Echo(_ context.Context, req *EchoMessage) (*EchoMessage, error) {
	return &EchoMessage{Message: req.Message}, nil
}

func echoHandler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(EchoMessage)
	if err := dec(in); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "malformed JSON message: %v", err)
	}
	if interceptor == nil {
		return srv.(benchService).Echo(ctx, in)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: "/bench.v1.BenchService/Echo"}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(benchService).Echo(ctx, req.(*EchoMessage))
	}
	return interceptor(ctx, in, info, handler)
}

var benchServiceDesc = grpc.ServiceDesc{
	ServiceName: "bench.v1.BenchService",
	HandlerType: (*benchService)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "Echo", Handler: echoHandler},
	},
	Streams:  []grpc.StreamDesc{},
	Metadata: "bench/v1/bench.proto",
}

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 50052, "TCP port to listen on")
	flag.Parse()

	encoding.RegisterCodec(jsonCodec{})

	lis, err := net.Listen("tcp", net.JoinHostPort(*host, fmt.Sprint(*port)))
	if err != nil {
		log.Fatalf("reference-go: listen: %v", err)
	}
	s := grpc.NewServer(grpc.MaxConcurrentStreams(256))
	s.RegisterService(&benchServiceDesc, server{})
	fmt.Printf("reference-go listening on %s\n", lis.Addr())
	if err := s.Serve(lis); err != nil {
		log.Fatalf("reference-go: serve: %v", err)
	}
}
