import Foundation
import LocafotoErrors
import LocafotoFormats
import LocafotoLocalSend
import Testing

/// LocalSend v2's JSON bodies as this node reads them from the LAN: the protocol's own examples
/// pass; truncated, oversized and hostile bodies are refused, each saying why.
@Suite("LocalSend messages")
struct LocalSendMessageTests {
    /// prepare-upload as github.com/localsend/protocol's README shows it (v2.1, §4.1).
    static let example = """
        {
          "info": {
            "alias": "Nice Orange", "version": "2.0", "deviceModel": "Samsung", "deviceType": "mobile",
            "fingerprint": "random-string", "port": 53317, "protocol": "https", "download": true
          },
          "files": {
            "some-file-id": {
              "id": "some-file-id", "fileName": "my image.png", "size": 324242, "fileType": "image/jpeg",
              "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
              "preview": "*preview data*",
              "metadata": {"modified": "2021-01-01T12:34:56Z", "accessed": "2021-01-01T12:34:56Z"}
            },
            "another-file-id": {
              "id": "another-file-id", "fileName": "another image.jpg", "size": 1234, "fileType": "image/jpeg"
            }
          }
        }
        """

    static func body(_ json: String) -> [UInt8] { Array(json.utf8) }

    static func refusal(_ json: String, limits: LocalSendLimits = LocalSendLimits()) -> LocalSendError? {
        do {
            _ = try LocalSendJSON.prepareUpload(body(json), limits: limits)
            return nil
        } catch let e as LocalSendError {
            return e
        } catch {
            Issue.record("not a LocalSendError: \(error)")
            return nil
        }
    }

    /// The example with one file's field replaced.
    static func withFile(_ field: String, _ value: String) -> String {
        """
        {"info": {"alias": "a", "version": "2.1", "fingerprint": "F"},
         "files": {"x": {"id": "x", "fileName": "p.jpg", "size": 5, "fileType": "image/jpeg", "\(field)": \(value)}}}
        """
    }

    @Test("the protocol's example is read as written, files in id order")
    func example() throws {
        let r = try LocalSendJSON.prepareUpload(Self.body(Self.example), limits: LocalSendLimits())
        #expect(r.info.alias == "Nice Orange" && r.info.deviceType == .mobile && r.info.port == 53317)
        #expect(r.orderedFiles.map(\.fileName) == ["another image.jpg", "my image.png"])
        #expect(r.files["some-file-id"]?.metadata?.modified == "2021-01-01T12:34:56Z")
        #expect(r.files["another-file-id"]?.sha256 == nil)
    }

    @Test("an announcement and a register body; an unknown device type is no type, not an error")
    func devices() throws {
        let d = try LocalSendJSON.device(
            Self.body(
                #"{"alias":"Secret Banana","version":"2.2","deviceModel":"Windows","deviceType":"fridge","fingerprint":"ABCD","port":53317,"protocol":"https","download":false,"announce":true}"#
            ))
        #expect(d.alias == "Secret Banana" && d.deviceType == nil && d.announce == true)
        let back = try JSONDecoder().decode(LocalSendDevice.self, from: JSONEncoder().encode(d))
        #expect(back == d)
    }

    @Test("a certificate fingerprint in lowercase hex reads as uppercase; other strings as they came")
    func fingerprintCase() throws {
        let lower = String(repeating: "ab12", count: 16)
        func device(_ fingerprint: String) throws -> LocalSendDevice {
            try LocalSendJSON.device(Self.body(#"{"alias":"cli","version":"2.0","fingerprint":"\#(fingerprint)"}"#))
        }
        #expect(try device(lower).fingerprint == lower.uppercased())
        #expect(try device("random-string-ab").fingerprint == "random-string-ab")
        #expect(try device(String(lower.dropLast())).fingerprint == String(lower.dropLast()))  // 63 digits
    }

    @Test("names from the LAN are cleaned where they enter: no escape sequences, no bidi overrides, 64 bytes")
    func aliasCleaned() throws {
        let d = try LocalSendJSON.device(
            Self.body(#"{"alias":"Bob\u001b[2J\u202eevil\nx","version":"2.1","fingerprint":"F"}"#))
        #expect(!d.alias.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E || $0 == "\n" })
        let long = try LocalSendJSON.device(
            Self.body(#"{"alias":"\#(String(repeating: "é", count: 100))","version":"2.1","fingerprint":"F"}"#))
        #expect(long.alias.utf8.count <= 64)
    }

    @Test(
        "hostile file names are refused, naming the rule",
        arguments: [
            #""../../etc/passwd""#, #""a\\b.jpg""#, #""..""#, #""""#, #""evil\u202egpj.exe""#,
            #""bell\u0007.jpg""#, #""line\nbreak.jpg""#, "\"\(String(repeating: "x", count: 256))\"",
            #""/etc/passwd""#, #""Camera//a.jpg""#, #""Camera/""#, #""Camera/./a.jpg""#, #""Camera/../a.jpg""#,
            "\"\(String(repeating: "d/", count: 16))a.jpg\"",
        ])
    func hostileNames(_ name: String) {
        let e = Self.refusal(
            Self.withFile("fileName", name).replacingOccurrences(of: #""fileName": "p.jpg", "#, with: ""))
        #expect(e?.code == .invalid)
        #expect(e?.message.contains("must be 1 to 255 bytes") == true, "\(e?.message ?? "")")
    }

    @Test("a folder's file: its path is kept, its name is the last part, its folder the first")
    func folders() throws {
        let request = try LocalSendJSON.prepareUpload(
            Self.body(
                Self.withFile("fileName", #""Holiday/2024/IMG_1006.JPG""#).replacingOccurrences(
                    of: #""fileName": "p.jpg", "#, with: "")), limits: LocalSendLimits())
        let file = try #require(request.files["x"])
        #expect(file.fileName == "Holiday/2024/IMG_1006.JPG")
        #expect(file.name == "IMG_1006.JPG" && file.folder == "Holiday")
        #expect(file.claimedPhotoType == .jpeg)
        let alone = LocalSendFile(id: "a", fileName: "IMG_1.jpg", size: 1, fileType: "image/jpeg")
        #expect(alone.name == "IMG_1.jpg" && alone.folder == nil)
    }

    @Test("sizes out of range, a malformed hash, an oversized preview, an id that is not its key")
    func hostileFields() {
        let noSize = { (v: String) in
            Self.withFile("size", v).replacingOccurrences(of: #""size": 5, "#, with: "")
        }
        #expect(Self.refusal(noSize("-1"))?.message.contains("outside 0...") == true)
        #expect(Self.refusal(noSize("99999999999999"))?.message.contains("outside 0...") == true)
        #expect(Self.refusal(noSize("0")) == nil)  // an empty file is a file; the receiver refuses it as a photo
        #expect(Self.refusal(Self.withFile("sha256", #""abc""#))?.message.contains("64 hex digits") == true)
        let preview = "\"\(String(repeating: "A", count: LocalSendLimits.maxPreviewBytes + 1))\""
        #expect(Self.refusal(Self.withFile("preview", preview))?.message.contains("preview") == true)
        let otherKey = """
            {"info": {"alias": "a", "version": "2.1", "fingerprint": "F"},
             "files": {"x": {"id": "y", "fileName": "p.jpg", "size": 5, "fileType": "image/jpeg"}}}
            """
        #expect(Self.refusal(otherKey)?.message.contains("names another id") == true)
    }

    @Test("10,000 files are more than a node takes at once; none is no request")
    func fileCounts() {
        let many = (0..<10_000).map {
            #""f\#($0)": {"id": "f\#($0)", "fileName": "p\#($0).jpg", "size": 1, "fileType": "image/jpeg"}"#
        }
        let json =
            #"{"info": {"alias": "a", "version": "2.1", "fingerprint": "F"}, "files": {"# + many.joined(separator: ",")
            + "}}"
        #expect(Self.refusal(json)?.message == "10000 files are offered; at most 1000 are taken at once")
        #expect(
            Self.refusal(#"{"info": {"alias": "a", "version": "2.1", "fingerprint": "F"}, "files": {}}"#)?.message
                == "the request offers no file")
    }

    @Test("a body over the limit is refused before it is parsed; truncated or mistyped JSON says so")
    func malformedBodies() {
        var small = LocalSendLimits()
        small.maxBodyBytes = 100
        #expect(Self.refusal(Self.example, limits: small)?.code == .tooLarge)
        let full = Self.body(Self.example)
        for cut in [0, 1, 10, full.count / 2, full.count - 1] {
            #expect(throws: LocalSendError.self) {
                _ = try LocalSendJSON.prepareUpload(Array(full.prefix(cut)), limits: LocalSendLimits())
            }
        }
        #expect(Self.refusal(#"{"files": {}}"#)?.message == "the body has no 'info'")
        #expect(
            Self.refusal(Self.withFile("size", #""big""#).replacingOccurrences(of: #""size": 5, "#, with: ""))?.message
                .contains("wrong type") == true)
        #expect(Self.refusal(#"[1, 2, 3]"#)?.code == .invalid)
    }

    @Test("only protocol version 2 is spoken; ports and schemes in range")
    func versions() {
        for bad in [
            #"{"alias":"a","version":"1.0","fingerprint":"F"}"#, #"{"alias":"a","version":"2","fingerprint":"F"}"#,
            #"{"alias":"a","version":"2.1","fingerprint":"F","port":70000}"#,
            #"{"alias":"a","version":"2.1","fingerprint":"F","protocol":"ftp"}"#,
            #"{"alias":"a","version":"2.1","fingerprint":"has space"}"#,
        ] {
            #expect(throws: LocalSendError.self, "\(bad)") { try LocalSendJSON.device(Self.body(bad)) }
        }
    }
}
