package main

import (
	"context"
	"database/sql"
	"sort"
	"strings"
	"time"
)

// The SQL of ours' CatalogStore+Stock.swift and CatalogStore.products(ids:), the same text.
const (
	reservationSeenSQL       = "SELECT 1 FROM reservations WHERE id = ?"
	stockSQL                 = "SELECT stock FROM products WHERE id = ?"
	insertReservationSQL     = "INSERT INTO reservations (id, created_at) VALUES (?, ?)"
	takeStockSQL             = "UPDATE products SET stock = stock - ? WHERE id = ?"
	insertReservationItemSQL = "INSERT INTO reservation_items (reservation_id, product_id, count) VALUES (?, ?, ?)"
	releaseReservationSQL    = "UPDATE reservations SET released_at = ? WHERE id = ? AND released_at IS NULL"
	giveBackStockSQL         = `UPDATE products SET stock = stock + (
    SELECT count FROM reservation_items WHERE reservation_id = ? AND product_id = products.id)
WHERE id IN (SELECT product_id FROM reservation_items WHERE reservation_id = ?)`
)

// products are the products with `ids` (each once), by id; unknown ids are absent. One query
// in a read transaction on the read pool (ours: BatchGetProducts' short read).
func (c *catalogService) products(ctx context.Context, ids []int64) (map[int64]*product, error) {
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")
	stmt, err := c.stmts.get("SELECT " + productColumns + " FROM products p WHERE p.id IN (" + marks + ")")
	if err != nil {
		return nil, err
	}
	tx, err := c.readers.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	args := make([]interface{}, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := tx.StmtContext(ctx, stmt).QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := map[int64]*product{}
	for rows.Next() {
		p := new(product)
		if err := scanProduct(rows, p); err != nil {
			return nil, err
		}
		found[p.ID] = p
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return found, tx.Commit()
}

// shortage is a product with less stock than a reservation wanted.
type shortage struct {
	productID, available, wanted int64
}

// reserve is ours' CatalogStore.reserve in one write transaction: takes `counts` (product id
// -> count) from stock under `reservationID`, all or nothing; an id seen before takes nothing
// more. Returns the unknown products or the shortages when it took nothing.
func (c *catalogService) reserve(ctx context.Context, reservationID string, counts map[int64]int64) (unknown []int64, short []shortage, err error) {
	ids := make([]int64, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	now := time.Now().Unix()
	err = c.writer.transaction(ctx, func(tx *sql.Tx) error {
		var seen int64
		switch err := c.writer.row(ctx, tx, reservationSeenSQL, reservationID).Scan(&seen); err {
		case nil:
			return nil
		case sql.ErrNoRows:
		default:
			return internalError(err)
		}
		for _, id := range ids {
			var stock int64
			err := c.writer.row(ctx, tx, stockSQL, id).Scan(&stock)
			if err == sql.ErrNoRows {
				unknown = append(unknown, id)
				continue
			}
			if err != nil {
				return internalError(err)
			}
			if stock < counts[id] {
				short = append(short, shortage{id, stock, counts[id]})
			}
		}
		if len(unknown) > 0 || len(short) > 0 {
			return nil
		}
		if _, err := c.writer.exec(ctx, tx, insertReservationSQL, reservationID, now); err != nil {
			return internalError(err)
		}
		// In product order, as every reservation takes its rows.
		for _, id := range ids {
			if _, err := c.writer.exec(ctx, tx, takeStockSQL, counts[id], id); err != nil {
				return internalError(err)
			}
			if _, err := c.writer.exec(ctx, tx, insertReservationItemSQL, reservationID, id, counts[id]); err != nil {
				return internalError(err)
			}
		}
		return nil
	})
	return unknown, short, err
}

// release is ours' CatalogStore.release: gives back the stock of `reservationID` once.
func (c *catalogService) release(ctx context.Context, reservationID string) error {
	return c.writer.transaction(ctx, func(tx *sql.Tx) error {
		changed, err := c.writer.changes(ctx, tx, releaseReservationSQL, time.Now().Unix(), reservationID)
		if err == nil && changed == 1 {
			_, err = c.writer.exec(ctx, tx, giveBackStockSQL, reservationID, reservationID)
		}
		if err != nil {
			return internalError(err)
		}
		return nil
	})
}
