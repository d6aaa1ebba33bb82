package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// The JSON shapes of API.md §2 and §4. Fields are declared in the order of their JSON names,
// so encoding/json writes the keys sorted, as our JSONCodec does.

type money struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

type rating struct {
	Count int64   `json:"count"`
	Rate  float64 `json:"rate"`
}

type product struct {
	Category    string `json:"category"`
	Description string `json:"description"`
	ID          int64  `json:"id"`
	Image       string `json:"image"`
	Price       money  `json:"price"`
	Rating      rating `json:"rating"`
	Stock       int64  `json:"stock"`
	Title       string `json:"title"`
}

type getProductRequest struct {
	ID int64 `json:"id"`
}

type productResponse struct {
	Product product `json:"product"`
}

type listProductsRequest struct {
	Category  *string `json:"category"`
	Query     *string `json:"query"`
	Sort      *string `json:"sort"`
	PageSize  *int    `json:"pageSize"`
	PageToken *string `json:"pageToken"`
}

type listProductsResponse struct {
	NextPageToken string    `json:"nextPageToken"`
	Products      []product `json:"products"`
	TotalSize     int64     `json:"totalSize"`
}

// productColumns are the product columns, in the order scanProduct reads them (ours:
// CatalogStore.productColumns).
const productColumns = "p.id, p.title, p.description, p.category, p.price_amount, p.currency, p.image, p.rating_rate, p.rating_count, p.stock"

// catalogService answers CatalogService from a copy of catalog-svc's catalog.sqlite.
type catalogService struct {
	writer  *database // takes stock for PlaceOrder (stock.go); also keeps the WAL index for the readers, as ours
	readers *sql.DB
	stmts   *statements
	// tokenKey signs page tokens as ours does (HMAC-SHA256 of scope, 0, payload; 16 bytes).
	tokenKey []byte
}

// openCatalog opens the catalog copy at `path`: a writer connection and `readers` readers.
func openCatalog(path string, readers int) (*catalogService, error) {
	writer, err := openWriter(path)
	if err != nil {
		return nil, err
	}
	pool, err := openReaders(path, readers)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	c := &catalogService{writer: newDatabase(writer), readers: pool, stmts: newStatements(pool), tokenKey: key}
	if err := c.writer.prepare(reservationSeenSQL, stockSQL, insertReservationSQL, takeStockSQL, insertReservationItemSQL,
		releaseReservationSQL, giveBackStockSQL); err != nil {
		return nil, err
	}
	// The search needs FTS5 in the linked SQLite: fail at start, not on the first search.
	if _, err := c.list(context.Background(), listFilter{search: []string{"a"}, sort: "RELEVANCE"}, 1); err != nil {
		return nil, fmt.Errorf("search query: %w", err)
	}
	return c, nil
}

// product is the product with `id`, or nil: the SQL of CatalogStore.product(id:on:).
func (c *catalogService) product(ctx context.Context, id int64) (*product, error) {
	stmt, err := c.stmts.get("SELECT " + productColumns + " FROM products p WHERE p.id = ?")
	if err != nil {
		return nil, err
	}
	var p product
	err = scanProduct(stmt.QueryRowContext(ctx, id), &p)
	if err == sql.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// scanProduct reads a row whose first columns are productColumns into `p`, and the columns
// after them into `extra`.
func scanProduct(row interface{ Scan(...interface{}) error }, p *product, extra ...interface{}) error {
	return row.Scan(append([]interface{}{&p.ID, &p.Title, &p.Description, &p.Category, &p.Price.Amount,
		&p.Price.Currency, &p.Image, &p.Rating.Rate, &p.Rating.Count, &p.Stock}, extra...)...)
}

// GetProduct answers `{id}` with `{product}`.
func (c *catalogService) GetProduct(ctx context.Context, req *getProductRequest) (interface{}, error) {
	p, err := c.product(ctx, req.ID)
	if err != nil {
		return nil, internalError(err)
	}
	if p == nil {
		return nil, shopError(ctx, codes.NotFound, "PRODUCT_NOT_FOUND", fmt.Sprintf("Product %d was not found.", req.ID))
	}
	return &productResponse{Product: *p}, nil
}

// listFilter is what a listing asks for (ours: CatalogStore.ProductFilter).
type listFilter struct {
	category *string
	search   []string // nil: no search
	sort     string
}

// sortKey is one key of a listing's order: an SQL expression, ascending or not.
type sortKey struct {
	expression string
	ascending  bool
}

// The relevance rank: 0 when the title holds every word of the query (ours: SearchIndex.titleRank).
const titleRank = "(p.id NOT IN (SELECT rowid FROM products_fts WHERE products_fts MATCH ?))"

// sortKeys are the listing's sort keys; the id (ascending) breaks the last tie (ours:
// CatalogStore.sortKeys(for:dialect:)).
func (f listFilter) sortKeys() []sortKey {
	switch f.sort {
	case "PRICE_ASC":
		return []sortKey{{"p.price_amount", true}}
	case "PRICE_DESC":
		return []sortKey{{"p.price_amount", false}}
	case "RATING":
		return []sortKey{{"p.rating_rate", false}, {"p.rating_count", false}}
	}
	if f.search != nil {
		return []sortKey{{titleRank, true}}
	}
	return nil
}

// selection is the FROM clause, the WHERE clause (or "") of the filter and the values they
// bind (ours: CatalogStore.selection(for:dialect:)).
func (f listFilter) selection() (string, string, []interface{}) {
	source := "FROM products p"
	var conditions []string
	var bindings []interface{}
	if f.search != nil {
		source += " JOIN products_fts ON products_fts.rowid = p.id"
		conditions = append(conditions, "products_fts MATCH ?")
		bindings = append(bindings, searchExpression(f.search))
	}
	if f.category != nil {
		conditions = append(conditions, "p.category = ? COLLATE NOCASE")
		bindings = append(bindings, *f.category)
	}
	if len(conditions) == 0 {
		return source, "", bindings
	}
	return source, " WHERE " + strings.Join(conditions, " AND "), bindings
}

// searchExpression is the FTS5 expression requiring every word as a prefix (ours:
// SearchQuery.expression(for:) for non-CJK words).
func searchExpression(words []string) string {
	terms := make([]string, len(words))
	for i, w := range words {
		terms[i] = `"` + w + `"*`
	}
	return strings.Join(terms, " ")
}

// searchWords are the query's runs of letters or digits, lower-cased, at most 16 (ours:
// SearchQuery.words(of:)).
func searchWords(query string) []string {
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	if len(words) > 16 {
		words = words[:16]
	}
	return words
}

// listPage is a first page of a listing: the products, the sort keys and id of the last one
// when there are more, and the total.
type listPage struct {
	products []product
	nextKeys []float64
	more     bool
	total    int64
}

// list runs ours' two queries (the page, then the count) in one read transaction.
func (c *catalogService) list(ctx context.Context, f listFilter, limit int) (*listPage, error) {
	keys := f.sortKeys()
	source, where, bindings := f.selection()
	var keyColumns strings.Builder
	order := make([]string, 0, len(keys)+1)
	for i, k := range keys {
		fmt.Fprintf(&keyColumns, ", %s AS k%d", k.expression, i)
		direction := "DESC"
		if k.ascending {
			direction = "ASC"
		}
		order = append(order, fmt.Sprintf("k%d %s", i, direction))
	}
	order = append(order, "id ASC")
	pageSQL := "SELECT * FROM (SELECT " + productColumns + keyColumns.String() + " " + source + where +
		") AS listing ORDER BY " + strings.Join(order, ", ") + " LIMIT ?"
	var pageBindings []interface{}
	if f.sort == "RELEVANCE" && f.search != nil {
		pageBindings = append(pageBindings, "title : ("+searchExpression(f.search)+")")
	}
	pageBindings = append(append(pageBindings, bindings...), limit+1)
	countSQL := "SELECT count(*) " + source + where

	pageStmt, err := c.stmts.get(pageSQL)
	if err != nil {
		return nil, err
	}
	countStmt, err := c.stmts.get(countSQL)
	if err != nil {
		return nil, err
	}
	tx, err := c.readers.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.StmtContext(ctx, pageStmt).QueryContext(ctx, pageBindings...)
	if err != nil {
		return nil, err
	}
	page := &listPage{products: make([]product, 0, limit)}
	keyValues := make([]float64, len(keys))
	extra := make([]interface{}, len(keys))
	for i := range keyValues {
		extra[i] = &keyValues[i]
	}
	for rows.Next() {
		if len(page.products) == limit {
			page.more = true
			break
		}
		var p product
		if err := scanProduct(rows, &p, extra...); err != nil {
			rows.Close()
			return nil, err
		}
		page.products = append(page.products, p)
		page.nextKeys = append([]float64(nil), keyValues...)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if err := tx.StmtContext(ctx, countStmt).QueryRowContext(ctx, bindings...).Scan(&page.total); err != nil {
		return nil, err
	}
	return page, tx.Commit()
}

// ListProducts answers a first page of a listing with ours' page size rules and page token.
func (c *catalogService) ListProducts(ctx context.Context, req *listProductsRequest) (interface{}, error) {
	if req.PageSize != nil && *req.PageSize < 0 {
		return nil, shopError(ctx, codes.InvalidArgument, "INVALID_PAGE_SIZE", "The page size must not be negative.")
	}
	if req.PageToken != nil && *req.PageToken != "" {
		return nil, shopError(ctx, codes.InvalidArgument, "INVALID_PAGE_TOKEN", "The reference serves first pages only.")
	}
	limit := 20
	if req.PageSize != nil && *req.PageSize > 0 {
		limit = *req.PageSize
		if limit > 100 {
			limit = 100
		}
	}
	f := listFilter{sort: "RELEVANCE"}
	if req.Sort != nil {
		switch *req.Sort {
		case "RELEVANCE", "PRICE_ASC", "PRICE_DESC", "RATING":
			f.sort = *req.Sort
		default:
			return nil, shopError(ctx, codes.InvalidArgument, "MALFORMED_MESSAGE", "sort is not one of the sorts.")
		}
	}
	if req.Category != nil && *req.Category != "" {
		f.category = req.Category
	}
	query := ""
	if req.Query != nil && strings.TrimSpace(*req.Query) != "" {
		query = *req.Query
		f.search = searchWords(query)
		if len(f.search) == 0 {
			return &listProductsResponse{Products: []product{}}, nil
		}
	}
	page, err := c.list(ctx, f, limit)
	if err != nil {
		return nil, internalError(err)
	}
	response := &listProductsResponse{Products: page.products, TotalSize: page.total}
	if page.more {
		category := ""
		if f.category != nil {
			category = strings.ToLower(*f.category)
		}
		last := page.products[len(page.products)-1]
		response.NextPageToken = c.pageToken(fmt.Sprintf("products|%s|%s|%s", category, query, f.sort), last.ID, page.nextKeys)
	}
	return response, nil
}

// pageToken is ours' PageTokens.encode: base64url(JSON cursor) "." base64url(16 bytes of
// HMAC-SHA256(scope, 0, JSON cursor)).
func (c *catalogService) pageToken(scope string, id int64, keys []float64) string {
	payload, _ := json.Marshal(struct {
		ID   int64     `json:"id"`
		Keys []float64 `json:"keys"`
	}{id, append([]float64{}, keys...)})
	mac := hmac.New(sha256.New, c.tokenKey)
	mac.Write([]byte(scope))
	mac.Write([]byte{0})
	mac.Write(payload)
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
}

// catalogServer is the interface the ServiceDesc's HandlerType names.
type catalogServer interface {
	GetProduct(context.Context, *getProductRequest) (interface{}, error)
	ListProducts(context.Context, *listProductsRequest) (interface{}, error)
}

// catalogServiceDesc describes shop.catalog.v1.CatalogService's methods served here.
var catalogServiceDesc = grpc.ServiceDesc{
	ServiceName: "shop.catalog.v1.CatalogService",
	HandlerType: (*catalogServer)(nil),
	Methods: []grpc.MethodDesc{
		unaryMethod("shop.catalog.v1.CatalogService", "GetProduct", catalogServer.GetProduct),
		unaryMethod("shop.catalog.v1.CatalogService", "ListProducts", catalogServer.ListProducts),
	},
	Streams:  []grpc.StreamDesc{},
	Metadata: "shop/catalog/v1/catalog.proto",
}
