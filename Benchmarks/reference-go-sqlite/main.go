// Command reference-go-sqlite is the Go+SQLite reference of Benchmarks/product-path: a plain
// grpc-go service answering the shop's product-path calls from SQLite through database/sql and
// go-sqlite3, the way a competent Go developer would write it.
//
// It serves, with our method paths and JSON message shapes (API.md §4, §5):
//
//	shop.catalog.v1.CatalogService/GetProduct, /ListProducts      (catalog.go)
//	shop.basket.v1.BasketService/GetBasket, /AddItem, /UpdateItemCount,
//	                             /RemoveItem, /ClearBasket           (basket.go)
//	shop.order.v1.OrderService/PlaceOrder                            (order.go, stock.go)
//
// from copies of a catalog.sqlite, a basket.sqlite and an order.sqlite that our own
// catalog-svc, basket-svc and order-svc created (Benchmarks/product-path makes them): same
// schema, data and indexes, and the same SQL text our stores run, each write its own
// transaction at synchronous=FULL on its database's one writer connection (no batching).
// Where it does less than ours, by design of the comparison:
//   - the user is the `sub` of the `authorization: Bearer` JWT, read without checking the
//     signature (ours verifies it against auth-svc's keys);
//   - AddItem and a raising UpdateItemCount read the product from this process's own catalog
//     copy (ours asks catalog-svc over the network);
//   - PlaceOrder reads the basket and the prices, takes the stock and clears the basket in this
//     process's copies (ours: four calls to basket-svc and catalog-svc), with the same
//     transactions; it has no recovery pass and no refund of a charge it gave up;
//   - ListProducts answers first pages only (a pageToken is refused) and never suggests a
//     spelling (ours does when a search finds nothing); search words are cut as ours cuts
//     non-CJK text.
//
// Messages are JSON, whatever the content-type names (as ours: "application/grpc" is JSON too):
// the server is given the JSON codec with grpc.CustomCodec (Debian's grpc-go 1.33 predates
// ForceServerCodec). Services are described by hand-written grpc.ServiceDesc values (no protoc).
//
// Build (offline, GOPATH mode, with Debian's golang-go, golang-google-grpc-dev and
// golang-github-mattn-go-sqlite3-dev; Debian's go-sqlite3 always links the system libsqlite3,
// whose FTS5 the search needs, so no build tag is needed):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode:$TMP go build -o reference-go-sqlite .
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"runtime"

	"google.golang.org/grpc"
)

// jsonCodec marshals messages with encoding/json.
type jsonCodec struct{}

func (jsonCodec) Marshal(v interface{}) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v interface{}) error { return json.Unmarshal(data, v) }
func (jsonCodec) Name() string                               { return "json" }
func (jsonCodec) String() string                             { return "json" }

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 50053, "TCP port to listen on")
	catalogPath := flag.String("catalog", "catalog.sqlite", "the catalog database (a copy of catalog-svc's)")
	basketPath := flag.String("basket", "basket.sqlite", "the basket database (a copy of basket-svc's)")
	orderPath := flag.String("order", "order.sqlite", "the order database (a copy of order-svc's)")
	readers := flag.Int("readers", 2*runtime.GOMAXPROCS(0), "read connections per database")
	flag.Parse()

	catalog, err := openCatalog(*catalogPath, *readers)
	if err != nil {
		log.Fatalf("reference-go-sqlite: catalog: %v", err)
	}
	basket, err := openBasket(*basketPath, *readers, catalog)
	if err != nil {
		log.Fatalf("reference-go-sqlite: basket: %v", err)
	}
	orders, err := openOrders(*orderPath, basket, catalog)
	if err != nil {
		log.Fatalf("reference-go-sqlite: order: %v", err)
	}

	lis, err := net.Listen("tcp", net.JoinHostPort(*host, fmt.Sprint(*port)))
	if err != nil {
		log.Fatalf("reference-go-sqlite: listen: %v", err)
	}
	s := grpc.NewServer(grpc.MaxConcurrentStreams(256), grpc.CustomCodec(jsonCodec{}))
	s.RegisterService(&catalogServiceDesc, catalog)
	s.RegisterService(&basketServiceDesc, basket)
	s.RegisterService(&orderServiceDesc, orders)
	fmt.Printf("reference-go-sqlite listening on %s\n", lis.Addr())
	if err := s.Serve(lis); err != nil {
		log.Fatalf("reference-go-sqlite: serve: %v", err)
	}
}
