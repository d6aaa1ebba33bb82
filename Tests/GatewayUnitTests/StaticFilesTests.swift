import Foundation
@testable import gateway
import RPCHTTP2
import ServiceKit
import ServiceTestSupport
import Testing

#if canImport(Glibc)
import Glibc
import RPC
#endif

/// The web storefront's files (``StaticFiles``): what is served, with which headers, and what
/// never is — whatever a request's path says.
@Suite("Gateway static files")
struct StaticFilesTests {
    /// A web root built for the test: `index.html`, `js/app.js`, `img/logo.svg`, a dotfile, a
    /// FIFO, a link to a file inside and one to a file outside, next to a `secret.txt` outside
    /// the root. Removed by the caller.
    struct Fixture {
        let directory: URL
        let root: URL
        let files: StaticFiles

        init() throws {
            directory = try TestScratch.makeDirectory(prefix: "static-files")
            root = directory.appendingPathComponent("root")
            let manager = FileManager.default
            try manager.createDirectory(at: root.appendingPathComponent("js"), withIntermediateDirectories: true)
            try manager.createDirectory(at: root.appendingPathComponent("img"), withIntermediateDirectories: true)
            try Data("<!doctype html><title>Shop</title>".utf8).write(to: root.appendingPathComponent("index.html"))
            try Data("export const x = 1;\n".utf8).write(to: root.appendingPathComponent("js/app.js"))
            try Data("<svg xmlns='http://www.w3.org/2000/svg'/>".utf8).write(to: root.appendingPathComponent("img/logo.svg"))
            try Data("token=hunter2".utf8).write(to: root.appendingPathComponent(".env"))
            try Data("the secret".utf8).write(to: directory.appendingPathComponent("secret.txt"))
            try manager.createSymbolicLink(
                atPath: root.appendingPathComponent("outside.txt").path, withDestinationPath: "../secret.txt")
            try manager.createSymbolicLink(atPath: root.appendingPathComponent("app-link.js").path, withDestinationPath: "js/app.js")
            try manager.createSymbolicLink(atPath: root.appendingPathComponent("etc").path, withDestinationPath: "/etc")
            #expect(mkfifo(root.appendingPathComponent("pipe.txt").path, 0o600) == 0)
            files = try StaticFiles(root: root.path)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// `files` asked for `path`: whether it served it, and what it answered.
    func ask(
        _ files: StaticFiles, _ method: String, _ path: String, headers: WebHeaders = [:]
    ) -> (served: Bool, answer: CapturedWebResponse.State) {
        let response = CapturedWebResponse()
        let request = WebRequest(method: method, path: path, query: nil, headers: headers, body: Data(), peer: "127.0.0.1:1", version: "HTTP/1.1")
        let served = files.serve(request, response: response)
        return (served, response.captured)
    }

    @Test("/ is index.html, with its type, no-cache, an ETag, nosniff and a CSP that allows only this origin")
    func indexWithHeaders() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let (served, answer) = ask(fixture.files, "GET", "/")
        #expect(served && answer.status == 200)
        #expect(String(decoding: answer.body, as: UTF8.self) == "<!doctype html><title>Shop</title>")
        #expect(answer.headers["content-type"] == "text/html; charset=utf-8")
        #expect(answer.headers["cache-control"] == "no-cache")
        #expect(answer.headers["etag"]?.hasPrefix("\"") == true)
        #expect(answer.headers["x-content-type-options"] == "nosniff")
        let policy = try #require(answer.headers["content-security-policy"])
        for directive in ["default-src 'self'", "connect-src 'self'", "img-src 'self' data:", "frame-ancestors 'none'", "base-uri 'none'"] {
            #expect(policy.contains(directive), "\(policy)")
        }
        #expect(!policy.contains("unsafe-inline") && !policy.contains("http"), "\(policy)")
    }

    @Test(
        "each file is served with the content type of its extension",
        arguments: [
            ("/js/app.js", "text/javascript; charset=utf-8", "no-cache"), ("/img/logo.svg", "image/svg+xml", "public, max-age=3600"),
            ("/index.html", "text/html; charset=utf-8", "no-cache"), ("/app-link.js", "text/javascript; charset=utf-8", "no-cache"),
        ])
    func contentTypes(path: String, type: String, cacheControl: String) throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let (served, answer) = ask(fixture.files, "GET", path)
        #expect(served && answer.status == 200, "\(path)")
        #expect(answer.headers["content-type"] == type)
        #expect(answer.headers["cache-control"] == cacheControl)
    }

    @Test(
        "the extension table names the web's types",
        arguments: [
            ("css", "text/css; charset=utf-8"), ("mjs", "text/javascript; charset=utf-8"), ("json", "application/json"),
            ("png", "image/png"), ("ico", "image/x-icon"), ("woff2", "font/woff2"), ("webmanifest", "application/manifest+json"),
            ("bin", "application/octet-stream"),
        ])
    func extensionTable(pathExtension: String, type: String) {
        #expect(StaticFiles.contentType(ofExtension: pathExtension).name == type)
    }

    @Test("a path without a dot is a client-side route answered with index.html; a missing file is left to the 404")
    func clientRoutes() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        for route in ["/products/12", "/basket", "/orders/abc-def"] {
            let (served, answer) = ask(fixture.files, "GET", route)
            #expect(served && answer.status == 200, "\(route)")
            #expect(String(decoding: answer.body, as: UTF8.self).hasPrefix("<!doctype html>"), "\(route)")
        }
        for missing in ["/missing.png", "/js/missing.js", "/img.v2/logo"] {
            #expect(!ask(fixture.files, "GET", missing).served, "\(missing)")
        }
    }

    @Test(
        "nothing outside the root is served, however the path is spelled",
        arguments: [
            "/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E/secret.txt", "/js/%2e%2e/%2e%2e/secret.txt", "/js/../../secret.txt",
            "/%2fetc%2fpasswd", "/..%5csecret.txt", "/index.html%00.js", "/%zz", "/%e2%28%a1.js", "/./index.html", "/index%+A.html", "/%-0",
        ])
    func traversalRefused(path: String) throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let (served, answer) = ask(fixture.files, "GET", path)
        #expect(served && answer.status == 400, "\(path): \(answer.status.map(String.init) ?? "not served")")
        #expect(!String(decoding: answer.body, as: UTF8.self).contains("secret"))
    }

    @Test("links out of the root, dotfiles and FIFOs are not served; links inside it are")
    func linksAndSpecialFiles() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        #expect(Set(fixture.files.files.keys) == ["/index.html", "/js/app.js", "/img/logo.svg", "/app-link.js"])
        for path in ["/outside.txt", "/etc/hostname.txt", "/.env", "/pipe.txt"] {
            let (served, answer) = ask(fixture.files, "GET", path)
            #expect(!served && answer.status == nil, "\(path)")
        }
        // Without a dot it is a client-side route: the page, never the file behind the link.
        let route = ask(fixture.files, "GET", "/etc/passwd").answer
        #expect(String(decoding: route.body, as: UTF8.self) == "<!doctype html><title>Shop</title>")
    }

    @Test("HEAD is answered as GET (the transport sends the head and the body's length only); other methods on a file get 405, elsewhere they are left alone")
    func methods() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let head = ask(fixture.files, "HEAD", "/js/app.js")
        let get = ask(fixture.files, "GET", "/js/app.js")
        #expect(head.served && head.answer.status == 200 && head.answer.body == get.answer.body)
        #expect(head.answer.headers["content-type"] == "text/javascript; charset=utf-8")
        for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
            let (served, answer) = ask(fixture.files, method, "/js/app.js")
            #expect(served && answer.status == 405 && answer.headers["allow"] == "GET, HEAD", "\(method)")
        }
        #expect(!ask(fixture.files, "POST", "/shop.catalog.v1.CatalogService/GetProduct").served)
    }

    @Test("a matching If-None-Match is answered 304 without a body")
    func conditional() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let etag = try #require(ask(fixture.files, "GET", "/js/app.js").answer.headers["etag"])
        for header in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
            let (_, answer) = ask(fixture.files, "GET", "/js/app.js", headers: ["if-none-match": header])
            #expect(answer.status == 304 && answer.body.isEmpty && answer.headers["etag"] == etag, "\(header)")
        }
        let stale = ask(fixture.files, "GET", "/js/app.js", headers: ["if-none-match": "\"stale\""])
        #expect(stale.answer.status == 200 && !stale.answer.body.isEmpty)
    }

    @Test("a root over 64 MiB, or one that is missing, is refused at start with a message")
    func boundedRoot() throws {
        let directory = try TestScratch.makeDirectory(prefix: "static-files-large")
        defer { try? FileManager.default.removeItem(at: directory) }
        let large = directory.appendingPathComponent("video.webm")
        #expect(FileManager.default.createFile(atPath: large.path, contents: nil))
        let handle = try FileHandle(forWritingTo: large)
        try handle.truncate(atOffset: UInt64(StaticFiles.maxTotalBytes + 1))
        try handle.close()
        #expect {
            try StaticFiles(root: directory.path)
        } throws: { error in
            (error as? StartupError)?.description.contains("more than 64 MiB") == true
        }
        #expect(throws: StartupError.self) { try StaticFiles(root: directory.appendingPathComponent("missing").path) }
    }

    @Test("the built-in storefront is found beside the executable and has its page, script and style")
    func builtIn() throws {
        let files = try StaticFiles(root: nil)
        for path in ["/index.html", "/js/app.js", "/js/api.js", "/app.css"] {
            #expect(files.files[path] != nil, "\(path) missing from \(files.files.keys.sorted())")
        }
        let page = String(decoding: try #require(files.files["/index.html"]).body, as: UTF8.self)
        // The CSP allows no inline script: the page only loads its modules.
        #expect(!page.contains("<script>") && page.contains("<script type=\"module\" src=\"/js/app.js\">"))
    }
}
