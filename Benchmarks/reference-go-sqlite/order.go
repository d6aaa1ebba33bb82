package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
)

// The JSON shapes of API.md §2 and §6, keys in sorted order (as our JSONCodec writes them).

type address struct {
	City       string  `json:"city"`
	Country    string  `json:"country"`
	Line1      string  `json:"line1"`
	Line2      *string `json:"line2,omitempty"`
	Name       string  `json:"name"`
	PostalCode string  `json:"postalCode"`
}

type cardDetails struct {
	CardNumber string `json:"cardNumber"`
	Cvc        string `json:"cvc"`
	ExpMonth   int    `json:"expMonth"`
	ExpYear    int    `json:"expYear"`
}

type placeOrderRequest struct {
	Payment         cardDetails `json:"payment"`
	ShippingAddress address     `json:"shippingAddress"`
}

type orderItem struct {
	Count        int64  `json:"count"`
	LineTotal    money  `json:"lineTotal"`
	ProductID    int64  `json:"productId"`
	ProductTitle string `json:"productTitle"`
	UnitPrice    money  `json:"unitPrice"`
}

type paymentSummary struct {
	Brand string `json:"brand"`
	Last4 string `json:"last4"`
}

type orderMessage struct {
	CreatedAt       string          `json:"createdAt"`
	ID              string          `json:"id"`
	Items           []orderItem     `json:"items"`
	Payment         *paymentSummary `json:"payment,omitempty"`
	ShippingAddress address         `json:"shippingAddress"`
	Status          string          `json:"status"`
	Total           money           `json:"total"`
	UpdatedAt       string          `json:"updatedAt"`
}

// storedError and storedAnswer are ours' StoredError and StoredAnswer: the answer kept for an
// idempotency key.
type storedError struct {
	Code    codes.Code `json:"code"`
	Message string     `json:"message"`
	Reason  string     `json:"reason,omitempty"`
}

type storedAnswer struct {
	Error *storedError  `json:"error,omitempty"`
	Order *orderMessage `json:"order,omitempty"`
}

// The SQL of ours' OrderStore (SQLite texts), the same text.
const (
	claimedKeySQL = `SELECT request_hash, state, answer_json, created_at,
    (order_id IS NULL AND (CAST(? AS INTEGER) IS NULL AND 0))
FROM idempotency_keys WHERE user_id = ? AND key = ?`
	deleteKeySQL = "DELETE FROM idempotency_keys WHERE user_id = ? AND key = ?"
	insertKeySQL = `INSERT INTO idempotency_keys (user_id, key, request_hash, state, created_at, claimed_by)
VALUES (?, ?, ?, 'running', ?, ?)
ON CONFLICT (user_id, key) DO NOTHING`
	insertOrderSQL = `INSERT INTO orders (id, user_id, status, step, items_json, total_amount, currency, address_json,
                    card_brand, card_last4, basket_version, idempotency_key, created_at, updated_at,
                    recovery_owner, lease_until, sequence)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT coalesce(max(sequence), 0) + 1 FROM orders))`
	tieKeySQL = `UPDATE idempotency_keys SET order_id = ?
WHERE user_id = ? AND key = ? AND order_id IS NULL AND (claimed_by = ? OR claimed_by IS NULL)`
	advanceSQL = `UPDATE orders SET step = ?, status = coalesce(CAST(? AS TEXT), status), updated_at = ?,
                  recovery_owner = ?, lease_until = ?
WHERE id = ?`
	renewLeaseSQL   = "UPDATE orders SET lease_until = ? WHERE id = ? AND recovery_owner = ?"
	insertChargeSQL = `INSERT INTO test_charges (order_id, amount, currency, brand, last4, status, decline_reason, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (order_id) DO NOTHING`
	chargeSQL    = "SELECT status, decline_reason FROM test_charges WHERE order_id = ?"
	answerKeySQL = `UPDATE idempotency_keys SET state = 'done', answer_json = ?
WHERE user_id = ? AND key = ? AND (CAST(? AS TEXT) IS NULL OR order_id = ?)`
	removePendingOrderSQL = "DELETE FROM orders WHERE id = ? AND step IN ('priced', 'reserved')"
	freeKeySQL            = "DELETE FROM idempotency_keys WHERE user_id = ? AND key = ? AND state = 'running'"
	removeOrderSQL        = "DELETE FROM orders WHERE id = ?"
)

// Ours' constants: the lease of a step (OrderStore.leaseDuration, seconds), how long an
// answer is kept (OrderStore.answerRetention), the owner name of a sole SQLite process.
const (
	leaseSeconds     = 30
	retentionSeconds = 24 * 3600
	replicaID        = "sole-process"
)

// The test numbers that decline (ours: TestPaymentProcessor.declines).
var decliningCards = map[string]string{
	"4000000000000002": "The card was declined.",
	"4000000000009995": "The card was declined: insufficient funds.",
}

// orderService answers OrderService/PlaceOrder from a copy of order-svc's order.sqlite, with
// the basket and catalog copies of this process in place of basket-svc and catalog-svc: the
// same transactions as ours' saga, each its own (BEGIN IMMEDIATE ... COMMIT at
// synchronous=FULL) on its database's one writer connection, one after the other per call.
type orderService struct {
	writer  *database
	basket  *basketService
	catalog *catalogService
	// hashKey keys the request hash of idempotency keys (ours: requestKey).
	hashKey []byte
}

// openOrders opens the order copy at `path` (its one writer connection) and prepares its SQL.
func openOrders(path string, basket *basketService, catalog *catalogService) (*orderService, error) {
	writer, err := openWriter(path)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	o := &orderService{writer: newDatabase(writer), basket: basket, catalog: catalog, hashKey: key}
	return o, o.writer.prepare(claimedKeySQL, deleteKeySQL, insertKeySQL, insertOrderSQL, tieKeySQL, advanceSQL,
		renewLeaseSQL, insertChargeSQL, chargeSQL, answerKeySQL, removePendingOrderSQL, freeKeySQL, removeOrderSQL)
}

// finalAnswer is an outcome stored for the idempotency key (a business refusal), with the
// pending order to remove in the same transaction.
type finalAnswer struct {
	err      error
	code     codes.Code
	reason   string
	message  string
	removing string
}

// Error is the answer's message.
func (f *finalAnswer) Error() string { return f.message }

// refusal is the final answer `code`/`reason` with `message`, as the client sees it.
func refusal(ctx context.Context, code codes.Code, reason, message string) *finalAnswer {
	return &finalAnswer{err: shopError(ctx, code, reason, message), code: code, reason: reason, message: message}
}

// keyKept is a failure after which the key must stay as it is: answered already (a declined
// card), or its order charged and left to a recovery (ours: LeftForRecovery).
type keyKept struct{ err error }

// Error is the failure's.
func (k *keyKept) Error() string { return k.err.Error() }

// PlaceOrder is ours' saga (order-svc's OrderService+PlaceOrder.swift), step by step.
func (o *orderService) PlaceOrder(ctx context.Context, req *placeOrderRequest) (interface{}, error) {
	user, err := callerID(ctx)
	if err != nil {
		return nil, err
	}
	md, _ := metadata.FromIncomingContext(ctx)
	keys := md.Get("idempotency-key")
	if len(keys) == 0 || len(keys[0]) < 1 || len(keys[0]) > 255 {
		return nil, shopError(ctx, codes.InvalidArgument, "IDEMPOTENCY_KEY_REQUIRED", "Send an idempotency-key header of 1 to 255 characters.")
	}
	key := keys[0]
	number, err := checkCard(ctx, req.Payment, time.Now().UTC())
	if err != nil {
		return nil, err
	}
	if err := checkAddress(ctx, req.ShippingAddress); err != nil {
		return nil, err
	}
	claimed, replay, err := o.claim(ctx, user, key, o.requestHash(req))
	if !claimed {
		return replay, err
	}
	order, err := o.place(ctx, req, number, user, key)
	var final *finalAnswer
	var kept *keyKept
	switch {
	case err == nil:
		return order, nil
	case errors.As(err, &final):
		answer := storedAnswer{Error: &storedError{Code: final.code, Message: final.message, Reason: final.reason}}
		if err := o.answer(ctx, user, key, answer, "", "", "", final.removing); err != nil {
			return nil, err
		}
		return nil, final.err
	case errors.As(err, &kept):
		return nil, kept.err
	default:
		_ = o.writer.transaction(ctx, func(tx *sql.Tx) error { // transient: a retry starts afresh
			_, err := o.writer.exec(ctx, tx, freeKeySQL, user, key)
			return err
		})
		return nil, err
	}
}

// claim is ours' OrderStore.claim in one write transaction: true when this call does the
// work; otherwise the stored answer (or refusal) to give.
func (o *orderService) claim(ctx context.Context, user, key, hash string) (bool, interface{}, error) {
	now := time.Now().Unix()
	claimed, answered := false, (*storedAnswer)(nil)
	err := o.writer.transaction(ctx, func(tx *sql.Tx) error {
		var storedHash, state string
		var answerJSON sql.NullString
		var created int64
		var abandoned sql.NullBool
		err := o.writer.row(ctx, tx, claimedKeySQL, now-10, user, key).Scan(&storedHash, &state, &answerJSON, &created, &abandoned)
		switch {
		case err == sql.ErrNoRows:
		case err != nil:
			return internalError(err)
		case now-created <= retentionSeconds && !abandoned.Bool:
			if storedHash != hash {
				return shopError(ctx, codes.InvalidArgument, "IDEMPOTENCY_KEY_REUSED", "This idempotency-key was used for a different order request.")
			}
			if state != "done" || !answerJSON.Valid {
				return nil
			}
			answered = new(storedAnswer)
			return json.Unmarshal([]byte(answerJSON.String), answered)
		default:
			if _, err := o.writer.exec(ctx, tx, deleteKeySQL, user, key); err != nil {
				return internalError(err)
			}
		}
		inserted, err := o.writer.changes(ctx, tx, insertKeySQL, user, key, hash, now, replicaID)
		if err != nil {
			return internalError(err)
		}
		claimed = inserted == 1
		return nil
	})
	switch {
	case err != nil:
		return false, nil, err
	case answered != nil && answered.Order != nil:
		return false, answered.Order, nil
	case answered != nil && answered.Error != nil:
		return false, nil, shopError(ctx, answered.Error.Code, answered.Error.Reason, answered.Error.Message)
	case !claimed:
		return false, nil, shopError(ctx, codes.Aborted, "REQUEST_IN_PROGRESS", "The first request with this idempotency-key is still running.")
	}
	return true, nil, nil
}

// place is steps 2-6 of ours: basket, prices, order recorded, stock, payment, answer, basket
// cleared. Returns *finalAnswer for outcomes to store, *keyKept when the key stays as it is.
func (o *orderService) place(ctx context.Context, req *placeOrderRequest, number, user, key string) (*orderMessage, error) {
	basket, err := o.basket.read(ctx, user)
	if err != nil {
		return nil, err
	}
	if len(basket.lines) == 0 {
		return nil, refusal(ctx, codes.FailedPrecondition, "EMPTY_BASKET", "Your basket is empty. Add some products first.")
	}
	items, err := o.reprice(ctx, basket)
	if err != nil {
		return nil, err
	}
	now := time.Now().Unix()
	order := &orderMessage{ID: newItemID(), Status: "PENDING", Items: items, ShippingAddress: req.ShippingAddress,
		Payment:   &paymentSummary{Brand: cardBrand(number), Last4: number[len(number)-4:]},
		CreatedAt: rfc3339(now), UpdatedAt: rfc3339(now)}
	order.Total.Currency = items[0].UnitPrice.Currency
	counts := map[int64]int64{}
	for _, item := range items {
		if item.UnitPrice.Currency != order.Total.Currency {
			return nil, refusal(ctx, codes.FailedPrecondition, "", "The basket mixes currencies.")
		}
		order.Total.Amount += item.LineTotal.Amount
		counts[item.ProductID] += item.Count
	}
	if err := o.insert(ctx, order, user, basket.version, key); err != nil {
		return nil, err
	}
	unknown, short, err := o.catalog.reserve(ctx, order.ID, counts)
	if err != nil {
		return nil, o.abandon(ctx, order.ID, err)
	}
	if len(unknown) > 0 || len(short) > 0 {
		final := refusal(ctx, codes.FailedPrecondition, "OUT_OF_STOCK", "Some products are out of stock.")
		final.removing = order.ID
		return nil, final
	}
	if err := o.advance(ctx, order.ID, "reserved", ""); err != nil {
		return nil, o.abandon(ctx, order.ID, err)
	}
	if renewed, err := o.renewLease(ctx, order.ID); err != nil || !renewed {
		return nil, &keyKept{shopError(ctx, codes.Aborted, "REQUEST_IN_PROGRESS", "The first request with this idempotency-key is still running.")}
	}
	status, reason, err := o.charge(ctx, order, number)
	if err != nil {
		return nil, o.abandon(ctx, order.ID, err)
	}
	if status == "declined" {
		declined := storedAnswer{Error: &storedError{Code: codes.FailedPrecondition, Message: reason, Reason: "PAYMENT_DECLINED"}}
		if err := o.answer(ctx, user, key, declined, order.ID, "declined", "PAYMENT_FAILED", ""); err != nil {
			return nil, o.abandon(ctx, order.ID, err)
		}
		if o.catalog.release(ctx, order.ID) == nil {
			_ = o.advance(ctx, order.ID, "done", "")
		}
		return nil, &keyKept{shopError(ctx, codes.FailedPrecondition, "PAYMENT_DECLINED", reason)}
	}
	if err := o.advance(ctx, order.ID, "charged", ""); err != nil {
		return nil, &keyKept{err}
	}
	order.Status = "PAID"
	order.UpdatedAt = rfc3339(time.Now().Unix())
	if err := o.answer(ctx, user, key, storedAnswer{Order: order}, order.ID, "done", "PAID", ""); err != nil {
		return nil, &keyKept{err}
	}
	// Cleared only if nobody changed the basket meanwhile; a refusal keeps it (as ours).
	_, _ = o.basket.clear(ctx, user, &basket.version)
	return order, nil
}

// reprice is the basket's lines at the catalog's current titles and prices (ours: one
// BatchGetProducts); a product gone from the catalog is OUT_OF_STOCK.
func (o *orderService) reprice(ctx context.Context, basket *basketRecord) ([]orderItem, error) {
	ids := make([]int64, 0, len(basket.lines))
	seen := map[int64]bool{}
	for _, l := range basket.lines {
		if !seen[l.productID] {
			seen[l.productID] = true
			ids = append(ids, l.productID)
		}
	}
	found, err := o.catalog.products(ctx, ids)
	if err != nil {
		return nil, internalError(err)
	}
	items := make([]orderItem, 0, len(basket.lines))
	for _, l := range basket.lines {
		p := found[l.productID]
		if p == nil {
			return nil, refusal(ctx, codes.FailedPrecondition, "OUT_OF_STOCK", fmt.Sprintf("Product %d is no longer sold.", l.productID))
		}
		items = append(items, orderItem{Count: l.count, LineTotal: money{p.Price.Amount * l.count, p.Price.Currency},
			ProductID: p.ID, ProductTitle: p.Title, UnitPrice: p.Price})
	}
	return items, nil
}

// insert is ours' OrderStore.insert: the PENDING order at step `priced`, leased to this
// process, tied to its idempotency key, in one write transaction.
func (o *orderService) insert(ctx context.Context, order *orderMessage, user string, basketVersion int64, key string) error {
	items, _ := json.Marshal(order.Items)
	addressJSON, _ := json.Marshal(order.ShippingAddress)
	now := time.Now().Unix()
	return o.writer.transaction(ctx, func(tx *sql.Tx) error {
		_, err := o.writer.exec(ctx, tx, insertOrderSQL, order.ID, user, order.Status, "priced", string(items),
			order.Total.Amount, order.Total.Currency, string(addressJSON), order.Payment.Brand, order.Payment.Last4,
			basketVersion, key, now, now, replicaID, now+leaseSeconds)
		if err != nil {
			return internalError(err)
		}
		tied, err := o.writer.changes(ctx, tx, tieKeySQL, order.ID, user, key, replicaID)
		if err != nil {
			return internalError(err)
		}
		if tied != 1 {
			return shopError(ctx, codes.Aborted, "REQUEST_IN_PROGRESS", "The first request with this idempotency-key is still running.")
		}
		return nil
	})
}

// advance is ours' OrderStore.advance: the order to `step` (and `status`, unless ""), its
// lease renewed, in one write transaction.
func (o *orderService) advance(ctx context.Context, orderID, step, status string) error {
	return o.writer.transaction(ctx, func(tx *sql.Tx) error {
		return o.advanceIn(ctx, tx, orderID, step, status)
	})
}

// advanceIn is advance's statement in `tx`.
func (o *orderService) advanceIn(ctx context.Context, tx *sql.Tx, orderID, step, status string) error {
	now := time.Now().Unix()
	var statusValue interface{}
	if status != "" {
		statusValue = status
	}
	if _, err := o.writer.exec(ctx, tx, advanceSQL, step, statusValue, now, replicaID, now+leaseSeconds, orderID); err != nil {
		return internalError(err)
	}
	return nil
}

// renewLease is ours' OrderStore.renewLease: whether this process still held the order.
func (o *orderService) renewLease(ctx context.Context, orderID string) (bool, error) {
	renewed := false
	err := o.writer.transaction(ctx, func(tx *sql.Tx) error {
		changed, err := o.writer.changes(ctx, tx, renewLeaseSQL, time.Now().Unix()+leaseSeconds, orderID, replicaID)
		if err != nil {
			return internalError(err)
		}
		renewed = changed == 1
		return nil
	})
	return renewed, err
}

// charge is ours' TestPaymentProcessor.charge (OrderStore.recordTestCharge): the charge of the
// order recorded once, in one write transaction; its status and decline reason.
func (o *orderService) charge(ctx context.Context, order *orderMessage, number string) (string, string, error) {
	status, reason := "charged", sql.NullString{}
	if why, declines := decliningCards[number]; declines {
		status, reason = "declined", sql.NullString{String: why, Valid: true}
	}
	err := o.writer.transaction(ctx, func(tx *sql.Tx) error {
		_, err := o.writer.exec(ctx, tx, insertChargeSQL, order.ID, order.Total.Amount, order.Total.Currency,
			order.Payment.Brand, order.Payment.Last4, status, reason, time.Now().Unix())
		if err == nil {
			err = o.writer.row(ctx, tx, chargeSQL, order.ID).Scan(&status, &reason)
		}
		if err != nil {
			return internalError(err)
		}
		return nil
	})
	return status, reason.String, err
}

// answer is ours' OrderStore.answer: the key's answer stored and, when given, the order moved
// to `step`/`status` or the pending order `removing` removed, in one write transaction.
func (o *orderService) answer(ctx context.Context, user, key string, answer storedAnswer, orderID, step, status, removing string) error {
	text, _ := json.Marshal(answer)
	var owner interface{}
	if orderID != "" {
		owner = orderID
	} else if removing != "" {
		owner = removing
	}
	return o.writer.transaction(ctx, func(tx *sql.Tx) error {
		if _, err := o.writer.exec(ctx, tx, answerKeySQL, string(text), user, key, owner, owner); err != nil {
			return internalError(err)
		}
		if orderID != "" && step != "" {
			if err := o.advanceIn(ctx, tx, orderID, step, status); err != nil {
				return err
			}
		}
		if removing != "" {
			if _, err := o.writer.exec(ctx, tx, removePendingOrderSQL, removing); err != nil {
				return internalError(err)
			}
		}
		return nil
	})
}

// abandon is ours' abandon without a refund (the test ledger is this process's): the stock
// given back and the pending order removed, then `err` (whose key PlaceOrder frees).
func (o *orderService) abandon(ctx context.Context, orderID string, err error) error {
	if o.catalog.release(ctx, orderID) != nil {
		return &keyKept{err}
	}
	if o.writer.transaction(ctx, func(tx *sql.Tx) error {
		_, err := o.writer.exec(ctx, tx, removeOrderSQL, orderID)
		return err
	}) != nil {
		return &keyKept{err}
	}
	return err
}

// requestHash is HMAC-SHA256 of the request's JSON (keys sorted, as ours) under hashKey.
func (o *orderService) requestHash(req *placeOrderRequest) string {
	text, _ := json.Marshal(req)
	mac := hmac.New(sha256.New, o.hashKey)
	mac.Write(text)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// rfc3339 is `seconds` as ours writes a time: 2026-11-22T01:41:17Z.
func rfc3339(seconds int64) string {
	return time.Unix(seconds, 0).UTC().Format("2006-01-02T15:04:05Z")
}

// invalidCard is INVALID_ARGUMENT/INVALID_CARD about `subject`.
func invalidCard(ctx context.Context, subject, description string) error {
	return shopError(ctx, codes.InvalidArgument, "INVALID_CARD", subject+" "+description+".")
}

// checkCard is ours' CardRules.card: the card number's digits, or INVALID_CARD.
func checkCard(ctx context.Context, card cardDetails, now time.Time) (string, error) {
	number := strings.NewReplacer(" ", "", "-", "").Replace(card.CardNumber)
	if len(number) < 12 || len(number) > 19 || !luhn(number) {
		return "", invalidCard(ctx, "The card number", "is not valid; check the digits")
	}
	if card.ExpMonth < 1 || card.ExpMonth > 12 {
		return "", invalidCard(ctx, "The expiry month", "must be 1 to 12")
	}
	if card.ExpYear < 1000 || card.ExpYear > 9999 {
		return "", invalidCard(ctx, "The expiry year", "must have four digits")
	}
	if card.ExpYear < now.Year() || card.ExpYear == now.Year() && card.ExpMonth < int(now.Month()) {
		return "", invalidCard(ctx, "The card", "has expired")
	}
	if len(card.Cvc) < 3 || len(card.Cvc) > 4 || strings.Trim(card.Cvc, "0123456789") != "" {
		return "", invalidCard(ctx, "The security code (CVC)", "must be 3 or 4 digits")
	}
	return number, nil
}

// luhn is whether `digits` (ASCII digits only) pass the Luhn check.
func luhn(digits string) bool {
	sum := 0
	for i := 0; i < len(digits); i++ {
		value := int(digits[len(digits)-1-i]) - '0'
		if value < 0 || value > 9 {
			return false
		}
		if i%2 == 1 {
			if value *= 2; value > 9 {
				value -= 9
			}
		}
		sum += value
	}
	return sum%10 == 0
}

// cardBrand is ours' CardRules.brand for the issuer prefix of `digits`.
func cardBrand(digits string) string {
	var two, four int
	fmt.Sscan(digits[:2], &two)
	fmt.Sscan(digits[:4], &four)
	switch {
	case digits[0] == '4':
		return "visa"
	case two >= 51 && two <= 55 || four >= 2221 && four <= 2720:
		return "mastercard"
	case two == 34 || two == 37:
		return "amex"
	case four == 6011 || two == 65:
		return "discover"
	}
	return "unknown"
}

// checkAddress is ours' AddressRules.check, naming the first bad field.
func checkAddress(ctx context.Context, a address) error {
	for _, field := range []struct{ subject, value string }{{"The recipient's name", a.Name},
		{"The first address line", a.Line1}, {"The city", a.City}, {"The postal code", a.PostalCode}} {
		if n := len([]rune(strings.TrimSpace(field.value))); n < 1 || n > 200 {
			return shopError(ctx, codes.InvalidArgument, "INVALID_ADDRESS", field.subject+" must be 1 to 200 characters.")
		}
	}
	if a.Line2 != nil && len([]rune(*a.Line2)) > 200 {
		return shopError(ctx, codes.InvalidArgument, "INVALID_ADDRESS", "The second address line must be at most 200 characters.")
	}
	if len(a.Country) != 2 || strings.ToUpper(a.Country) != a.Country || strings.Trim(a.Country, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return shopError(ctx, codes.InvalidArgument, "INVALID_ADDRESS", "The country must be a two-letter ISO 3166-1 code, e.g. US.")
	}
	return nil
}

// orderServer is the interface the ServiceDesc's HandlerType names.
type orderServer interface {
	PlaceOrder(context.Context, *placeOrderRequest) (interface{}, error)
}

// orderServiceDesc describes shop.order.v1.OrderService's methods served here.
var orderServiceDesc = grpc.ServiceDesc{
	ServiceName: "shop.order.v1.OrderService",
	HandlerType: (*orderServer)(nil),
	Methods: []grpc.MethodDesc{
		unaryMethod("shop.order.v1.OrderService", "PlaceOrder", orderServer.PlaceOrder),
	},
	Streams:  []grpc.StreamDesc{},
	Metadata: "shop/order/v1/order.proto",
}
