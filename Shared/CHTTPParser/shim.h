// libhttp-parser-dev (Debian): the HTTP/1.1 request parser of the gateway's web edge.
#include <http_parser.h>
