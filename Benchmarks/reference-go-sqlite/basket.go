package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// The JSON shapes of API.md §2 and §5, keys in sorted order (as our JSONCodec writes them).

type basketItem struct {
	Count        int64  `json:"count"`
	ID           string `json:"id"`
	ImageURL     string `json:"imageURL"`
	LineTotal    money  `json:"lineTotal"`
	ProductID    int64  `json:"productId"`
	ProductTitle string `json:"productTitle"`
	UnitPrice    money  `json:"unitPrice"`
}

type basketMessage struct {
	ItemCount int64        `json:"itemCount"`
	Items     []basketItem `json:"items"`
	Total     money        `json:"total"`
	UpdatedAt string       `json:"updatedAt"`
	Version   int64        `json:"version"`
}

type addItemRequest struct {
	ProductID int64  `json:"productId"`
	Count     *int64 `json:"count"`
}

type updateItemCountRequest struct {
	ItemID          string `json:"itemId"`
	Count           int64  `json:"count"`
	ExpectedVersion *int64 `json:"expectedVersion"`
}

type removeItemRequest struct {
	ItemID string `json:"itemId"`
}

type clearBasketRequest struct {
	ExpectedVersion *int64 `json:"expectedVersion"`
}

// The SQL of ours' BasketStore, the same text.
const (
	selectBasketSQL = "SELECT version, updated_at FROM baskets WHERE user_id = ?"
	selectLinesSQL  = `SELECT id, product_id, title, unit_amount, currency, image_url, count
FROM basket_lines WHERE user_id = ? ORDER BY seq`
	bumpVersionSQL = `INSERT INTO baskets (user_id, version, updated_at) VALUES (?, 1, ?)
ON CONFLICT (user_id) DO UPDATE SET version = baskets.version + 1, updated_at = excluded.updated_at`
	insertLineSQL = `INSERT INTO basket_lines (id, user_id, product_id, title, unit_amount, currency, image_url, count)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	deleteLineSQL = "DELETE FROM basket_lines WHERE id = ? AND user_id = ?"
	updateLineSQL = "UPDATE basket_lines SET count = ? WHERE id = ? AND user_id = ?"
	clearLinesSQL = "DELETE FROM basket_lines WHERE user_id = ?"
)

// The most lines a basket holds (ours: BasketContract.maxLines).
const maxLines = 100

// basketService answers BasketService from a copy of basket-svc's basket.sqlite: every change
// is one transaction (BEGIN IMMEDIATE ... COMMIT at synchronous=FULL) on the single writer
// connection, as ours' BasketStore runs it.
type basketService struct {
	writer  *sql.DB
	stmts   *statements
	catalog *catalogService
}

// openBasket opens the basket copy at `path` (its one writer connection) and prepares its SQL.
func openBasket(path string, catalog *catalogService) (*basketService, error) {
	writer, err := openWriter(path)
	if err != nil {
		return nil, err
	}
	b := &basketService{writer: writer, stmts: newStatements(writer), catalog: catalog}
	for _, text := range []string{selectBasketSQL, selectLinesSQL, bumpVersionSQL, insertLineSQL, deleteLineSQL, updateLineSQL, clearLinesSQL} {
		if _, err := b.stmts.get(text); err != nil {
			return nil, fmt.Errorf("prepare %q: %w", text, err)
		}
	}
	return b, nil
}

// line is a basket line as stored.
type line struct {
	id, title, currency, imageURL string
	productID, unitAmount, count  int64
}

// basketRecord is a basket as stored; version 0 when the user never changed it.
type basketRecord struct {
	version, updatedAt int64
	lines              []line
}

// writeTx runs `body` in one write transaction on the writer connection; commits when it
// returns nil, rolls back otherwise.
func (b *basketService) writeTx(ctx context.Context, body func(*sql.Tx) error) error {
	tx, err := b.writer.BeginTx(ctx, nil)
	if err != nil {
		return internalError(err)
	}
	if err := body(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return internalError(err)
	}
	return nil
}

// exec runs the prepared statement `text` in `tx`.
func (b *basketService) exec(ctx context.Context, tx *sql.Tx, text string, args ...interface{}) (sql.Result, error) {
	stmt, err := b.stmts.get(text)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, stmt).ExecContext(ctx, args...)
}

// basket reads the basket of `user` in `tx` (ours: BasketStore.basket(userID:on:)).
func (b *basketService) basket(ctx context.Context, tx *sql.Tx, user string) (*basketRecord, error) {
	stmt, _ := b.stmts.get(selectBasketSQL) // prepared by openBasket: cannot fail here
	record := &basketRecord{}
	err := tx.StmtContext(ctx, stmt).QueryRowContext(ctx, user).Scan(&record.version, &record.updatedAt)
	if err == sql.ErrNoRows {
		return record, nil
	}
	if err != nil {
		return nil, err
	}
	stmt, _ = b.stmts.get(selectLinesSQL)
	rows, err := tx.StmtContext(ctx, stmt).QueryContext(ctx, user)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var l line
		if err := rows.Scan(&l.id, &l.productID, &l.title, &l.unitAmount, &l.currency, &l.imageURL, &l.count); err != nil {
			return nil, err
		}
		record.lines = append(record.lines, l)
	}
	return record, rows.Err()
}

// bumpVersion records a change of the basket: version + 1 (ours: BasketStore.bumpVersion).
func (b *basketService) bumpVersion(ctx context.Context, tx *sql.Tx, user string) error {
	_, err := b.exec(ctx, tx, bumpVersionSQL, user, time.Now().UnixMilli())
	return err
}

// message is the Basket message of `r`.
func (r *basketRecord) message() *basketMessage {
	m := &basketMessage{Items: make([]basketItem, 0, len(r.lines)), Version: r.version,
		UpdatedAt: time.UnixMilli(r.updatedAt).UTC().Format("2006-01-02T15:04:05.000Z")}
	m.Total.Currency = "USD"
	if len(r.lines) > 0 {
		m.Total.Currency = r.lines[0].currency
	}
	for _, l := range r.lines {
		m.Items = append(m.Items, basketItem{Count: l.count, ID: l.id, ImageURL: l.imageURL,
			LineTotal: money{l.unitAmount * l.count, l.currency}, ProductID: l.productID, ProductTitle: l.title,
			UnitPrice: money{l.unitAmount, l.currency}})
		m.ItemCount += l.count
		m.Total.Amount += l.unitAmount * l.count
	}
	return m
}

// changed runs `change` on the basket of the caller in one write transaction and answers the
// basket: read again in it when `change` wrote (it then bumped the version, where ours does).
func (b *basketService) changed(ctx context.Context, user string, change func(*sql.Tx, *basketRecord) (bool, error)) (interface{}, error) {
	var answer *basketRecord
	err := b.writeTx(ctx, func(tx *sql.Tx) error {
		current, err := b.basket(ctx, tx, user)
		if err != nil {
			return internalError(err)
		}
		wrote, err := change(tx, current)
		if err != nil {
			return err
		}
		if !wrote {
			answer = current
			return nil
		}
		answer, err = b.basket(ctx, tx, user)
		if err != nil {
			return internalError(err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return answer.message(), nil
}

// invalidCount refuses a count outside lowest...10.
func invalidCount(ctx context.Context, lowest int64) error {
	return shopError(ctx, codes.InvalidArgument, "INVALID_COUNT", fmt.Sprintf("The count must be between %d and 10.", lowest))
}

// outOfStock refuses a count above the product's stock.
func outOfStock(ctx context.Context, p *product) error {
	return shopError(ctx, codes.FailedPrecondition, "OUT_OF_STOCK", fmt.Sprintf("Only %d of product %d are in stock.", p.Stock, p.ID))
}

// checkVersion refuses a change made against another version of the basket.
func checkVersion(ctx context.Context, expected *int64, current *basketRecord) error {
	if expected != nil && *expected != current.version {
		return shopError(ctx, codes.Aborted, "VERSION_CONFLICT", "The basket changed meanwhile.")
	}
	return nil
}

// newItemID is a random (version 4) UUID, lower-case, as ours' line ids.
func newItemID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// AddItem adds a line: the product (title, price, image, stock) from this process's catalog
// copy, then ours' transaction: read the basket, refuse a second line of a product or a full
// basket, bump the version, insert the line, read the basket.
func (b *basketService) AddItem(ctx context.Context, req *addItemRequest) (interface{}, error) {
	user, err := callerID(ctx)
	if err != nil {
		return nil, err
	}
	count := int64(1)
	if req.Count != nil {
		count = *req.Count
	}
	if count < 1 || count > 10 {
		return nil, invalidCount(ctx, 1)
	}
	var p *product
	if req.ProductID > 0 {
		if p, err = b.catalog.product(ctx, req.ProductID); err != nil {
			return nil, internalError(err)
		}
	}
	if p == nil {
		return nil, shopError(ctx, codes.NotFound, "PRODUCT_NOT_FOUND", fmt.Sprintf("Product %d was not found.", req.ProductID))
	}
	if count > p.Stock {
		return nil, outOfStock(ctx, p)
	}
	return b.changed(ctx, user, func(tx *sql.Tx, current *basketRecord) (bool, error) {
		for _, l := range current.lines {
			if l.productID == req.ProductID {
				return false, shopError(ctx, codes.AlreadyExists, "ALREADY_IN_BASKET", "The product is already in basket.")
			}
		}
		if len(current.lines) >= maxLines {
			return false, shopError(ctx, codes.ResourceExhausted, "BASKET_FULL", "The basket is full.")
		}
		if len(current.lines) > 0 && current.lines[0].currency != p.Price.Currency {
			return false, shopError(ctx, codes.FailedPrecondition, "CURRENCY_MISMATCH", "The basket holds another currency.")
		}
		// The basket row first: the line references it.
		if err := b.bumpVersion(ctx, tx, user); err != nil {
			return false, internalError(err)
		}
		_, err := b.exec(ctx, tx, insertLineSQL, newItemID(), user, p.ID, p.Title, p.Price.Amount, p.Price.Currency, p.Image, count)
		if err != nil {
			return false, internalError(err)
		}
		return true, nil
	})
}

// setCount is ours' BasketStore.setCount in one transaction; raising a count reads the
// product's stock from the catalog copy inside it (ours asks catalog-svc before it).
func (b *basketService) setCount(ctx context.Context, itemID string, count int64, expected *int64) (interface{}, error) {
	user, err := callerID(ctx)
	if err != nil {
		return nil, err
	}
	return b.changed(ctx, user, func(tx *sql.Tx, current *basketRecord) (bool, error) {
		if err := checkVersion(ctx, expected, current); err != nil {
			return false, err
		}
		var found *line
		for i := range current.lines {
			if current.lines[i].id == itemID {
				found = &current.lines[i]
			}
		}
		if found == nil {
			return false, shopError(ctx, codes.NotFound, "ITEM_NOT_FOUND", "The basket has no such item.")
		}
		if found.count == count {
			return false, nil
		}
		if count > found.count {
			p, err := b.catalog.product(ctx, found.productID)
			if err != nil {
				return false, internalError(err)
			}
			if p == nil {
				return false, shopError(ctx, codes.NotFound, "PRODUCT_NOT_FOUND", "The product is gone.")
			}
			if count > p.Stock {
				return false, outOfStock(ctx, p)
			}
		}
		if count == 0 {
			_, err = b.exec(ctx, tx, deleteLineSQL, itemID, user)
		} else {
			_, err = b.exec(ctx, tx, updateLineSQL, count, itemID, user)
		}
		if err == nil {
			err = b.bumpVersion(ctx, tx, user)
		}
		if err != nil {
			return false, internalError(err)
		}
		return true, nil
	})
}

// UpdateItemCount sets a line's count; 0 removes it.
func (b *basketService) UpdateItemCount(ctx context.Context, req *updateItemCountRequest) (interface{}, error) {
	if req.Count < 0 || req.Count > 10 {
		return nil, invalidCount(ctx, 0)
	}
	return b.setCount(ctx, req.ItemID, req.Count, req.ExpectedVersion)
}

// RemoveItem removes a line.
func (b *basketService) RemoveItem(ctx context.Context, req *removeItemRequest) (interface{}, error) {
	return b.setCount(ctx, req.ItemID, 0, nil)
}

// ClearBasket removes every line.
func (b *basketService) ClearBasket(ctx context.Context, req *clearBasketRequest) (interface{}, error) {
	user, err := callerID(ctx)
	if err != nil {
		return nil, err
	}
	return b.changed(ctx, user, func(tx *sql.Tx, current *basketRecord) (bool, error) {
		if err := checkVersion(ctx, req.ExpectedVersion, current); err != nil {
			return false, err
		}
		if len(current.lines) == 0 {
			return false, nil
		}
		if _, err := b.exec(ctx, tx, clearLinesSQL, user); err != nil {
			return false, internalError(err)
		}
		if err := b.bumpVersion(ctx, tx, user); err != nil {
			return false, internalError(err)
		}
		return true, nil
	})
}

// basketServer is the interface the ServiceDesc's HandlerType names.
type basketServer interface {
	AddItem(context.Context, *addItemRequest) (interface{}, error)
	UpdateItemCount(context.Context, *updateItemCountRequest) (interface{}, error)
	RemoveItem(context.Context, *removeItemRequest) (interface{}, error)
	ClearBasket(context.Context, *clearBasketRequest) (interface{}, error)
}

// basketServiceDesc describes shop.basket.v1.BasketService's methods served here.
var basketServiceDesc = grpc.ServiceDesc{
	ServiceName: "shop.basket.v1.BasketService",
	HandlerType: (*basketServer)(nil),
	Methods: []grpc.MethodDesc{
		unaryMethod("shop.basket.v1.BasketService", "AddItem", basketServer.AddItem),
		unaryMethod("shop.basket.v1.BasketService", "UpdateItemCount", basketServer.UpdateItemCount),
		unaryMethod("shop.basket.v1.BasketService", "RemoveItem", basketServer.RemoveItem),
		unaryMethod("shop.basket.v1.BasketService", "ClearBasket", basketServer.ClearBasket),
	},
	Streams:  []grpc.StreamDesc{},
	Metadata: "shop/basket/v1/basket.proto",
}
