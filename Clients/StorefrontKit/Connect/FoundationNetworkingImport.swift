// URLSession lives in FoundationNetworking on Linux and in Foundation on Apple platforms;
// every file of the library that names it imports this way.
#if canImport(FoundationNetworking)
@_exported public import FoundationNetworking
#endif
