import RPC
import Testing

// Immediate interceptors (`Router.canPrepareImmediately`/`prepareImmediately`) in-process.

/// What an immediate interceptor attaches to the context.
private enum StampKey: AttributeKey {
    typealias Value = [String]
}

/// An interceptor that never suspends: stamps the context and may reject.
private struct StampInterceptor: ImmediateServerInterceptor {
    let name: String
    let trail: RouterCallbackTests.Trail
    let predicate: @Sendable (MethodInfo) -> Bool
    var rejects = false

    func applies(to method: MethodInfo) -> Bool { predicate(method) }

    func prepareImmediately(_ context: inout ServerContext) throws {
        trail.append("\(name)(\(context.method.method))")
        if rejects { throw RPCError(code: .permissionDenied, reason: "STAMPED_OUT", message: "\(name) says no.") }
        context.attributes[StampKey.self] = (context.attributes[StampKey.self] ?? []) + [name]
    }
}

/// An ordinary interceptor that suspends.
private struct SuspendingInterceptor: ServerInterceptor {
    let name: String
    let trail: RouterCallbackTests.Trail
    let predicate: @Sendable (MethodInfo) -> Bool

    func applies(to method: MethodInfo) -> Bool { predicate(method) }

    func prepare(_ context: inout ServerContext) async throws {
        await Task.yield()
        trail.append("\(name)(\(context.method.method))")
    }
}

extension RouterCallbackTests {
    @Test("canPrepareImmediately holds unless an ordinary interceptor applies to the method")
    func canPrepareImmediately() {
        let trail = Trail()
        var router = Router()
        for info in [Notes.callback, Notes.admin, Notes.user] { #expect(router.canPrepareImmediately(info)) }
        router.addInterceptor(StampInterceptor(name: "everywhere", trail: trail) { _ in true })
        router.addInterceptor(StampInterceptor(name: "admin", trail: trail) { $0.auth == .admin })
        for info in [Notes.callback, Notes.admin, Notes.user] { #expect(router.canPrepareImmediately(info)) }
        // An ordinary interceptor for user methods: only they lose the immediate path.
        router.addInterceptor(SuspendingInterceptor(name: "user", trail: trail) { $0.auth == .user })
        #expect(router.canPrepareImmediately(Notes.callback))
        #expect(router.canPrepareImmediately(Notes.admin))
        #expect(!router.canPrepareImmediately(Notes.user))
        // One that applies to nothing changes nothing.
        router.addInterceptor(SuspendingInterceptor(name: "never", trail: trail) { _ in false })
        #expect(router.canPrepareImmediately(Notes.callback))
        #expect(!router.canPrepareImmediately(Notes.user))
        #expect(trail.entries.isEmpty)  // asking never runs an interceptor
    }

    @Test("prepareImmediately runs the immediate interceptors that apply, in order, skipping ordinary ones that do not")
    func prepareImmediatelyRunsWhatApplies() throws {
        let trail = Trail()
        var router = Router()
        router.addInterceptor(StampInterceptor(name: "first", trail: trail) { _ in true })
        router.addInterceptor(SuspendingInterceptor(name: "user-only", trail: trail) { $0.auth == .user })
        router.addInterceptor(StampInterceptor(name: "admin-only", trail: trail) { $0.auth == .admin })
        router.addInterceptor(StampInterceptor(name: "last", trail: trail) { _ in true })

        var plain = Self.context(for: Notes.callback)
        try router.prepareImmediately(&plain)
        #expect(plain.attributes[StampKey.self] == ["first", "last"])
        var admin = Self.context(for: Notes.admin)
        try router.prepareImmediately(&admin)
        #expect(admin.attributes[StampKey.self] == ["first", "admin-only", "last"])
        #expect(trail.entries == ["first(Callback)", "last(Callback)", "first(AdminCallback)", "admin-only(AdminCallback)", "last(AdminCallback)"])
    }

    @Test("an immediate interceptor that rejects ends prepareImmediately with its error; later ones do not run")
    func prepareImmediatelyRejects() throws {
        let trail = Trail()
        var router = Router()
        router.addInterceptor(StampInterceptor(name: "gate", trail: trail, predicate: { $0.auth == .admin }, rejects: true))
        router.addInterceptor(StampInterceptor(name: "after", trail: trail) { _ in true })
        var plain = Self.context(for: Notes.callback)
        try router.prepareImmediately(&plain)
        #expect(plain.attributes[StampKey.self] == ["after"])
        var admin = Self.context(for: Notes.admin)
        let error = try #require(throws: RPCError.self) { try router.prepareImmediately(&admin) }
        #expect(error.code == .permissionDenied)
        #expect(error.reason == "STAMPED_OUT")
        #expect(trail.entries == ["after(Callback)", "gate(AdminCallback)"])
    }

    @Test("an immediate interceptor serves the async prepare too, with the same effect")
    func immediateInterceptorThroughAsyncPrepare() async throws {
        let trail = Trail()
        var router = Router()
        router.addInterceptor(StampInterceptor(name: "stamp", trail: trail) { _ in true })
        router.addInterceptor(SuspendingInterceptor(name: "suspending", trail: trail) { $0.auth == .user })
        router.addInterceptor(StampInterceptor(name: "gate", trail: trail, predicate: { $0.auth == .admin }, rejects: true))
        var user = Self.context(for: Notes.user)
        try await router.prepare(&user)
        #expect(user.attributes[StampKey.self] == ["stamp"])
        var admin = Self.context(for: Notes.admin)
        let error = try await #require(throws: RPCError.self) { try await router.prepare(&admin) }
        #expect(error.reason == "STAMPED_OUT")
        #expect(trail.entries == ["stamp(UserCallback)", "suspending(UserCallback)", "stamp(AdminCallback)", "gate(AdminCallback)"])
    }
}

extension RouterCallbackTests {
    @Test("a registered method carries the interceptors that apply to it, added before or after it, in order")
    func registeredMethodCarriesItsInterceptors() async throws {
        let trail = Trail()
        var router = Router()
        router.addInterceptor(StampInterceptor(name: "before", trail: trail) { _ in true })
        for info in [Notes.callback, Notes.user] { router.registerCallback(info) { _, _, _ in } }
        router.addInterceptor(StampInterceptor(name: "admin-only", trail: trail) { $0.auth == .admin })
        router.addInterceptor(SuspendingInterceptor(name: "user-only", trail: trail) { $0.auth == .user })
        router.addInterceptor(StampInterceptor(name: "after", trail: trail) { _ in true })

        let callback = try #require(router.method(forPath: Notes.callback.path)).interceptors
        #expect(callback.canPrepareImmediately)
        var context = Self.context(for: Notes.callback)
        try callback.prepareImmediately(&context)
        #expect(context.attributes[StampKey.self] == ["before", "after"])

        let user = try #require(router.method(forPath: Notes.user.path)).interceptors
        #expect(!user.canPrepareImmediately)
        var userContext = Self.context(for: Notes.user)
        try await user.prepare(&userContext)
        #expect(userContext.attributes[StampKey.self] == ["before", "after"])
        #expect(trail.entries == ["before(Callback)", "after(Callback)", "before(UserCallback)", "user-only(UserCallback)", "after(UserCallback)"])
    }
}
