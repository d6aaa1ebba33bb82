# Benchmarks/lib/gateway_pair.sh — sourced by gateway-overhead and gateway-ab: a release
# catalog-svc on the seed catalog with a gateway in front of it (rate limits off; GetProduct is
# public, so no auth-svc), and the GetProduct {"id": 7} request h2load sends to either.

export SHOP_INTERNAL_API_KEY=bench SHOP_ADMIN_API_KEY=bench

# Writes the gRPC-framed GetProduct {"id": 7} request to FILE.
write_get_product() { # FILE
  python3 -c 'import struct,sys; b=b"{\"id\":7}"; sys.stdout.buffer.write(b"\0"+struct.pack(">I",len(b))+b)' >"$1"
}

# Starts BIN_DIR's catalog-svc on CATALOG_PORT and its gateway on CATALOG_PORT + 1, each under
# its prefix command (e.g. `taskset -c 0`; "" for none), with data and logs under WORK/NAME-*;
# sets CATALOG_PID and GATEWAY_PID.
start_gateway_pair() { # NAME BIN_DIR WORK CATALOG_PORT CATALOG_PREFIX GATEWAY_PREFIX
  local name=$1 bin=$2 work=$3 port=$4
  local -a catalog_prefix=() gateway_prefix=()
  [[ -n $5 ]] && read -r -a catalog_prefix <<<"$5"
  [[ -n $6 ]] && read -r -a gateway_prefix <<<"$6"
  "${catalog_prefix[@]}" "$bin/catalog-svc" --port "$port" --data-dir "$work/$name-catalog" --log-level warning \
    --auth-addr 127.0.0.1:1 >"$work/$name-catalog.log" 2>&1 &
  CATALOG_PID=$!
  "${gateway_prefix[@]}" "$bin/gateway" --port "$((port + 1))" --data-dir "$work/$name-gateway" --log-level warning \
    --rate-limit 0 --auth-addr 127.0.0.1:1 --catalog-addr "127.0.0.1:$port" \
    --basket-addr 127.0.0.1:1 --order-addr 127.0.0.1:1 >"$work/$name-gateway.log" 2>&1 &
  GATEWAY_PID=$!
}

# h2load counts any HTTP 200 as a success: checks once that each PORT answers GetProduct
# (request in FILE) with grpc-status 0, and exits the script if one does not.
check_get_product() { # FILE PORT...
  local file=$1 port
  shift
  for port in "$@"; do
    nghttp -d "$file" -H 'content-type: application/grpc+json' -H 'te: trailers' \
      "http://127.0.0.1:$port/shop.catalog.v1.CatalogService/GetProduct" -v 2>&1 | grep -q 'grpc-status: 0' \
      || { echo "GetProduct on port $port did not answer grpc-status 0" >&2; exit 1; }
  done
}
