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
// connection, as ours' BasketStore runs it; GetBasket reads in a read transaction on a pool of
// read connections, as ours' short reads do.
type basketService struct {
	writer  *database
	readers *database
	catalog *catalogService
}

// openBasket opens the basket copy at `path` (its one writer connection and `readers` read
// connections) and prepares its SQL.
func openBasket(path string, readers int, catalog *catalogService) (*basketService, error) {
	writer, err := openWriter(path)
	if err != nil {
		return nil, err
	}
	pool, err := openReaders(path, readers)
	if err != nil {
		return nil, err
	}
	b := &basketService{writer: newDatabase(writer), readers: newDatabase(pool), catalog: catalog}
	if err := b.writer.prepare(selectBasketSQL, selectLinesSQL, bumpVersionSQL, insertLineSQL, deleteLineSQL, updateLineSQL, clearLinesSQL); err != nil {
		return nil, err
	}
	return b, b.readers.prepare(selectBasketSQL, selectLinesSQL)
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

// basket reads the basket of `user` in `tx` of `d` (ours: BasketStore.basket(userID:on:)).
func basket(ctx context.Context, d *database, tx *sql.Tx, user string) (*basketRecord, error) {
	record := &basketRecord{}
	err := d.row(ctx, tx, selectBasketSQL, user).Scan(&record.version, &record.updatedAt)
	if err == sql.ErrNoRows {
		return record, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := d.query(ctx, tx, selectLinesSQL, user)
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

// read is the basket of `user` in a read transaction (ours: GetBasket's short read).
func (b *basketService) read(ctx context.Context, user string) (*basketRecord, error) {
	var record *basketRecord
	err := b.readers.transaction(ctx, func(tx *sql.Tx) error {
		var err error
		if record, err = basket(ctx, b.readers, tx, user); err != nil {
			return internalError(err)
		}
		return nil
	})
	return record, err
}

// bumpVersion records a change of the basket: version + 1 (ours: BasketStore.bumpVersion).
func (b *basketService) bumpVersion(ctx context.Context, tx *sql.Tx, user string) error {
	_, err := b.writer.exec(ctx, tx, bumpVersionSQL, user, time.Now().UnixMilli())
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
	err := b.writer.transaction(ctx, func(tx *sql.Tx) error {
		current, err := basket(ctx, b.writer, tx, user)
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
		answer, err = basket(ctx, b.writer, tx, user)
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
		_, err := b.writer.exec(ctx, tx, insertLineSQL, newItemID(), user, p.ID, p.Title, p.Price.Amount, p.Price.Currency, p.Image, count)
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
			_, err = b.writer.exec(ctx, tx, deleteLineSQL, itemID, user)
		} else {
			_, err = b.writer.exec(ctx, tx, updateLineSQL, count, itemID, user)
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
	return b.clear(ctx, user, req.ExpectedVersion)
}

// clear is ours' BasketStore.clear in one transaction: refused when the basket is not at
// `expected` (when given); an empty basket is left as it is.
func (b *basketService) clear(ctx context.Context, user string, expected *int64) (interface{}, error) {
	return b.changed(ctx, user, func(tx *sql.Tx, current *basketRecord) (bool, error) {
		if err := checkVersion(ctx, expected, current); err != nil {
			return false, err
		}
		if len(current.lines) == 0 {
			return false, nil
		}
		if _, err := b.writer.exec(ctx, tx, clearLinesSQL, user); err != nil {
			return false, internalError(err)
		}
		if err := b.bumpVersion(ctx, tx, user); err != nil {
			return false, internalError(err)
		}
		return true, nil
	})
}

// GetBasket answers the caller's basket.
func (b *basketService) GetBasket(ctx context.Context, _ *struct{}) (interface{}, error) {
	user, err := callerID(ctx)
	if err != nil {
		return nil, err
	}
	record, err := b.read(ctx, user)
	if err != nil {
		return nil, err
	}
	return record.message(), nil
}

// basketServer is the interface the ServiceDesc's HandlerType names.
type basketServer interface {
	GetBasket(context.Context, *struct{}) (interface{}, error)
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
		unaryMethod("shop.basket.v1.BasketService", "GetBasket", basketServer.GetBasket),
		unaryMethod("shop.basket.v1.BasketService", "AddItem", basketServer.AddItem),
		unaryMethod("shop.basket.v1.BasketService", "UpdateItemCount", basketServer.UpdateItemCount),
		unaryMethod("shop.basket.v1.BasketService", "RemoveItem", basketServer.RemoveItem),
		unaryMethod("shop.basket.v1.BasketService", "ClearBasket", basketServer.ClearBasket),
	},
	Streams:  []grpc.StreamDesc{},
	Metadata: "shop/basket/v1/basket.proto",
}
