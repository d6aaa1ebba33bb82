// Command writeload drives basket writes and orders for Benchmarks/product-path: h2load sends
// one set of headers to every call, and each write here needs its own user's token.
//
// Each line of -tokens is one user's access token; one goroutine per user loops a write for
// -seconds over -conns HTTP/2 connections (the users spread over them):
//
//	-mode add     AddItem {productId, count 1} then RemoveItem of that line (the basket stays
//	              small and every call is a write transaction)
//	-mode update  UpdateItemCount of one line, alternating counts 2 and 1 (raising asks for
//	              the product's stock, lowering does not)
//	-mode order   AddItem {productId, count 1} (not counted) then PlaceOrder of that basket
//	              with a new idempotency-key, at -order-addr (the order service; -addr is
//	              the basket service): calls are PlaceOrder calls, a failed AddItem counts as
//	              an error too
//
// Before the loop each user's basket is cleared (and, for update, its line added); that is
// not measured, nor the first -warmup seconds. Prints one JSON object: calls, seconds,
// callsPerSecond, p50Ms, p99Ms, errors and errorCodes (code -> count). Messages are JSON
// (content-type application/grpc+json), as our services and the Go reference speak.
//
// Build (offline, GOPATH mode, as Benchmarks/run builds Benchmarks/reference-go):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode:$TMP go build -o writeload .
//
// (Debian's grpc-go is 1.33, older than credentials/insecure: h2c is grpc.WithInsecure.)
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// jsonCodec marshals messages with encoding/json.
type jsonCodec struct{}

func (jsonCodec) Marshal(v interface{}) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v interface{}) error { return json.Unmarshal(data, v) }
func (jsonCodec) Name() string                               { return "json" }

const basketService = "/shop.basket.v1.BasketService/"

// placeOrder is PlaceOrder's path.
const placeOrder = "/shop.order.v1.OrderService/PlaceOrder"

// placeOrderRequest is the order every user places (Benchmarks/lib/shop_users.py's
// PLACE_ORDER_REQUEST): a Luhn-valid test card that the test processor charges.
var placeOrderRequest = map[string]interface{}{
	"shippingAddress": map[string]interface{}{"name": "Bench", "line1": "1 Loop Road", "city": "Testville", "postalCode": "12345", "country": "US"},
	"payment":         map[string]interface{}{"cardNumber": "4242424242424242", "expMonth": 12, "expYear": 2030, "cvc": "123"},
}

// newKey is a random idempotency key: 32 hex digits.
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// basket is the part of a Basket answer the driver reads.
type basket struct {
	Items []struct {
		ID        string `json:"id"`
		ProductID int64  `json:"productId"`
	} `json:"items"`
}

// itemOf is the id of the line of `productID` in `b`, or "".
func (b *basket) itemOf(productID int64) string {
	for _, item := range b.Items {
		if item.ProductID == productID {
			return item.ID
		}
	}
	return ""
}

// user is one simulated shopper: a connection to the basket service and one to the order
// service, a token, a product.
type user struct {
	conn      *grpc.ClientConn
	orderConn *grpc.ClientConn
	ctx       context.Context
	productID int64
}

// call makes one basket call and decodes the answer.
func (u *user) call(method string, request interface{}) (*basket, error) {
	answer := new(basket)
	ctx, cancel := context.WithTimeout(u.ctx, 30*time.Second)
	defer cancel()
	err := u.conn.Invoke(ctx, basketService+method, request, answer)
	return answer, err
}

// order places an order of the user's basket with a new idempotency key (the answer unread).
func (u *user) order() error {
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(u.ctx, "idempotency-key", newKey()), 30*time.Second)
	defer cancel()
	return u.orderConn.Invoke(ctx, placeOrder, placeOrderRequest, new(json.RawMessage))
}

// prepare clears the basket and, for update, adds the line it will change.
func (u *user) prepare(mode string) (string, error) {
	if _, err := u.call("ClearBasket", map[string]interface{}{}); err != nil {
		return "", fmt.Errorf("ClearBasket: %w", err)
	}
	if mode != "update" {
		return "", nil
	}
	b, err := u.call("AddItem", map[string]interface{}{"productId": u.productID, "count": 1})
	if err != nil {
		return "", fmt.Errorf("AddItem: %w", err)
	}
	return b.itemOf(u.productID), nil
}

// tally is what the goroutines measured.
type tally struct {
	mu        sync.Mutex
	latencies []time.Duration
	codes     map[string]int
	last      time.Time
}

// add merges one goroutine's calls into the tally.
func (t *tally) add(latencies []time.Duration, codes map[string]int, end time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.latencies = append(t.latencies, latencies...)
	for code, n := range codes {
		t.codes[code] += n
	}
	if end.After(t.last) {
		t.last = end
	}
}

// loop runs `u`'s writes until `stop`, recording those that start after `measureFrom`.
func (u *user) loop(mode, itemID string, measureFrom, stop time.Time, into *tally) {
	var latencies []time.Duration
	codes := map[string]int{}
	// record counts a call that started at `started` (a success, or a failure's code) when
	// it started after measureFrom; `counted`: a success counts as a call.
	record := func(started time.Time, err error, counted bool) {
		if !started.After(measureFrom) {
			return
		}
		if err != nil {
			codes[status.Code(err).String()]++
		} else if counted {
			latencies = append(latencies, time.Since(started))
		}
	}
	timed := func(method string, request interface{}) *basket {
		started := time.Now()
		b, err := u.call(method, request)
		record(started, err, true)
		if err != nil {
			return nil
		}
		return b
	}
	count := 2
	for time.Now().Before(stop) {
		switch mode {
		case "add":
			b := timed("AddItem", map[string]interface{}{"productId": u.productID, "count": 1})
			if b == nil {
				u.call("ClearBasket", map[string]interface{}{}) // back to a known state, unmeasured
				continue
			}
			timed("RemoveItem", map[string]interface{}{"itemId": b.itemOf(u.productID)})
		case "update":
			timed("UpdateItemCount", map[string]interface{}{"itemId": itemID, "count": count})
			count = 3 - count
		case "order":
			started := time.Now()
			_, err := u.call("AddItem", map[string]interface{}{"productId": u.productID, "count": 1})
			record(started, err, false)
			if err == nil {
				started = time.Now()
				err = u.order()
				record(started, err, true)
			}
			if err != nil {
				u.call("ClearBasket", map[string]interface{}{}) // back to a known state, unmeasured
			}
		}
	}
	into.add(latencies, codes, time.Now())
}

// percentile is the nearest-rank percentile `p` of ascending `sorted`, in milliseconds.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.999999) - 1
	if rank < 0 {
		rank = 0
	}
	return float64(sorted[rank].Microseconds()) / 1000
}

// readTokens reads one token per non-empty line of `path`.
func readTokens(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var tokens []string
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 64*1024), 64*1024)
	for scanner.Scan() {
		if line := scanner.Text(); line != "" {
			tokens = append(tokens, line)
		}
	}
	return tokens, scanner.Err()
}

func main() {
	addr := flag.String("addr", "127.0.0.1:50053", "the basket service")
	orderAddr := flag.String("order-addr", "", "the order service (-mode order; default -addr)")
	tokensPath := flag.String("tokens", "tokens.txt", "one access token per line, one user each")
	mode := flag.String("mode", "add", "add (AddItem + RemoveItem), update (UpdateItemCount 2, 1, ...) or order (AddItem + PlaceOrder)")
	seconds := flag.Float64("seconds", 5, "measured seconds")
	warmup := flag.Float64("warmup", 1, "seconds before measuring")
	conns := flag.Int("conns", 4, "HTTP/2 connections")
	products := flag.Int64("products", 20, "users add products 1...products (user i: i mod products + 1)")
	flag.Parse()
	if *mode != "add" && *mode != "update" && *mode != "order" {
		log.Fatalf("writeload: -mode must be add, update or order")
	}
	if *orderAddr == "" {
		*orderAddr = *addr
	}
	encodingOption := grpc.WithDefaultCallOptions(grpc.ForceCodec(jsonCodec{}))
	tokens, err := readTokens(*tokensPath)
	if err != nil || len(tokens) == 0 {
		log.Fatalf("writeload: no tokens in %s: %v", *tokensPath, err)
	}
	connections, orderConnections := make([]*grpc.ClientConn, *conns), make([]*grpc.ClientConn, *conns)
	for i := range connections {
		if connections[i], err = grpc.Dial(*addr, grpc.WithInsecure(), encodingOption); err != nil {
			log.Fatalf("writeload: dial: %v", err)
		}
		orderConnections[i] = connections[i]
		if *mode == "order" && *orderAddr != *addr {
			if orderConnections[i], err = grpc.Dial(*orderAddr, grpc.WithInsecure(), encodingOption); err != nil {
				log.Fatalf("writeload: dial: %v", err)
			}
		}
	}
	users := make([]*user, len(tokens))
	itemIDs := make([]string, len(tokens))
	for i, token := range tokens {
		users[i] = &user{conn: connections[i%len(connections)], orderConn: orderConnections[i%len(connections)],
			productID: int64(i)%*products + 1,
			ctx:       metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)}
		if itemIDs[i], err = users[i].prepare(*mode); err != nil {
			log.Fatalf("writeload: user %d: %v", i, err)
		}
	}

	into := &tally{codes: map[string]int{}}
	measureFrom := time.Now().Add(time.Duration(*warmup * float64(time.Second)))
	stop := measureFrom.Add(time.Duration(*seconds * float64(time.Second)))
	var wg sync.WaitGroup
	for i, u := range users {
		wg.Add(1)
		go func(u *user, itemID string) {
			defer wg.Done()
			u.loop(*mode, itemID, measureFrom, stop, into)
		}(u, itemIDs[i])
	}
	wg.Wait()

	sort.Slice(into.latencies, func(i, j int) bool { return into.latencies[i] < into.latencies[j] })
	elapsed := into.last.Sub(measureFrom).Seconds()
	errors := 0
	for _, n := range into.codes {
		errors += n
	}
	out, _ := json.Marshal(map[string]interface{}{
		"calls": len(into.latencies), "seconds": elapsed, "callsPerSecond": float64(len(into.latencies)) / elapsed,
		"p50Ms": percentile(into.latencies, 50), "p99Ms": percentile(into.latencies, 99),
		"errors": errors, "errorCodes": into.codes, "users": len(users), "mode": *mode,
	})
	fmt.Println(string(out))
}
