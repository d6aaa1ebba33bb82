// Command fanout-watchers is the watcher side of Benchmarks/basket-fanout in Go: it holds
// -watchers WatchBasket streams on basket-svc, watcher i watching the user of line i % users of
// -tokens (one access token a line), -per-conn streams on each connection, and reports on
// standard output:
//
//	ready                  once every watcher has its first snapshot
//	arrived U V T          when the last watcher of user U (its line, from 0) has version V,
//	                       at T (Unix nanoseconds, CLOCK_REALTIME, as Python's time.time_ns)
//
// Python decoding every snapshot of 10,000 streams is slower than basket-svc sending them; this
// keeps the client out of what is measured. Messages are JSON (a codec named "json", as
// Benchmarks/reference-go registers).
//
// Build (offline, GOPATH mode, with Debian's golang-go and golang-google-grpc-dev):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode:$TMP go build -o fanout-watchers main.go
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/metadata"
)

// jsonCodec marshals messages with encoding/json.
type jsonCodec struct{}

func (jsonCodec) Marshal(v interface{}) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v interface{}) error { return json.Unmarshal(data, v) }
func (jsonCodec) Name() string                               { return "json" }

// snapshot is the part of a Basket the benchmark reads.
type snapshot struct {
	Version int `json:"version"`
}

// user counts, per version, the watchers of one user holding it.
type user struct {
	sync.Mutex
	watchers int
	holding  map[int]int
}

// output writes report lines whole, one writer at a time.
type output struct {
	sync.Mutex
	w *bufio.Writer
}

func (o *output) line(format string, args ...interface{}) {
	o.Lock()
	defer o.Unlock()
	fmt.Fprintf(o.w, format+"\n", args...)
	o.w.Flush()
}

func main() {
	addr := flag.String("addr", "127.0.0.1:20203", "basket-svc address")
	tokensFile := flag.String("tokens", "", "access tokens, one a line")
	count := flag.Int("watchers", 10000, "WatchBasket streams")
	perConn := flag.Int("per-conn", 200, "streams per connection")
	flag.Parse()
	encoding.RegisterCodec(jsonCodec{})

	data, err := os.ReadFile(*tokensFile)
	if err != nil {
		log.Fatalf("fanout-watchers: %v", err)
	}
	tokens := strings.Fields(string(data))
	users := make([]*user, len(tokens))
	for i := range users {
		users[i] = &user{holding: map[int]int{}}
	}
	for i := 0; i < *count; i++ {
		users[i%len(tokens)].watchers++
	}
	out := &output{w: bufio.NewWriter(os.Stdout)}
	var conns []*grpc.ClientConn
	for i := 0; i < (*count+*perConn-1) / *perConn; i++ {
		conn, err := grpc.Dial(*addr, grpc.WithInsecure(),
			grpc.WithDefaultCallOptions(grpc.CallContentSubtype("json")))
		if err != nil {
			log.Fatalf("fanout-watchers: %v", err)
		}
		conns = append(conns, conn)
	}
	var opened sync.WaitGroup
	opened.Add(*count)
	desc := &grpc.StreamDesc{ServerStreams: true}
	for i := 0; i < *count; i++ {
		go func(index int) {
			u := users[index%len(tokens)]
			ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tokens[index%len(tokens)])
			stream, err := conns[index / *perConn].NewStream(ctx, desc, "/shop.basket.v1.BasketService/WatchBasket")
			if err == nil {
				err = stream.SendMsg(map[string]interface{}{})
			}
			if err == nil {
				err = stream.CloseSend()
			}
			if err != nil {
				log.Fatalf("fanout-watchers: watcher %d: %v", index, err)
			}
			for first := true; ; first = false {
				var basket snapshot
				if err := stream.RecvMsg(&basket); err != nil {
					log.Fatalf("fanout-watchers: watcher %d: %v", index, err)
				}
				at := time.Now().UnixNano()
				u.Lock()
				u.holding[basket.Version]++
				last := u.holding[basket.Version] == u.watchers
				u.Unlock()
				if last {
					out.line("arrived %d %d %d", index%len(tokens), basket.Version, at)
				}
				if first {
					opened.Done()
				}
			}
		}(i)
	}
	opened.Wait()
	out.line("ready")
	select {}
}
