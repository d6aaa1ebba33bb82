import RPC

/// The two shapes most commands take: one call whose answer is printed, and a watch whose
/// every message is printed. Printing is `Output`'s: the message as received with `--json`,
/// text for people otherwise.
extension GlobalOptions {
    /// Connects to the gateway, makes one unary call of `method` with the request `request`
    /// builds (it may call the gateway first, as `basket set` does to resolve an item id) and
    /// prints the answer, `human` making the text.
    func call<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, metadata: Metadata = Metadata(),
        request: (CommandContext) async throws -> Request, printing human: (Response) -> String
    ) async throws {
        try await withContext { context in
            let reply = try await context.gateway.unary(method, try await request(context), metadata: metadata)
            context.output.message(reply.raw) { human(reply.message) }
        }
    }

    /// Connects to the gateway, makes one unary call of `method` with `request` and prints the
    /// answer, `human` making the text.
    func call<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, _ request: Request, metadata: Metadata = Metadata(),
        printing human: (Response) -> String
    ) async throws {
        try await call(method, metadata: metadata, request: { _ in request }, printing: human)
    }

    /// Connects to the gateway, calls the server-streaming `method` with `request` and prints
    /// each message as it arrives, `human` making the text, until the stream ends, a final
    /// failure, or the user stops it (Ctrl-C, which exits 0). A restart of the gateway or the
    /// service does not end it: it reconnects as ``WatchResume`` says, saying `reconnecting…`
    /// on standard error (also with `--json`, whose standard output stays messages only).
    func watch<Request, Response>(
        _ method: MethodDescriptor<Request, Response>, _ request: Request,
        printing human: @escaping @Sendable (Response) -> String
    ) async throws {
        let resume = WatchResume(notice: { Output.error($0) })
        try await withContext { context in
            _ = try await Interruption.run {
                try await context.gateway.watch(method, request, resume: resume) { reply in
                    context.output.message(reply.raw) { human(reply.message) }
                }
            }
        }
    }
}
