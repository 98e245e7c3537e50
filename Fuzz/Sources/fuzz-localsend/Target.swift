// LocalSend v2's JSON bodies as a node reads them from the LAN (LocafotoLocalSend): a
// prepare-upload body, a device announcement, a multicast datagram, and a receiver's answer to
// this node's prepare-upload, from the same bytes.
// Properties: only LocalSendError is thrown; a request read passes every rule (1 to maxFiles
// files, each under its own id, names without path separators or unsafe characters, sizes and
// total in range); names from the LAN come out clean; a body over the limit is never parsed.
import FuzzSupport
import LocafotoLocalSend
import LocafotoWire

let limits: LocalSendLimits = {
    var l = LocalSendLimits()
    l.maxBodyBytes = 64 << 10  // the fuzzer's inputs are small; the limit's path is still taken
    l.maxFiles = 64
    return l
}()

func fuzz(_ input: [UInt8]) {
    do {
        let r = try LocalSendJSON.prepareUpload(input, limits: limits)
        check(input.count <= limits.maxBodyBytes, "a body over the limit was parsed")
        check((1...limits.maxFiles).contains(r.files.count), "\(r.files.count) files passed")
        var total: Int64 = 0
        for (key, f) in r.files {
            check(key == f.id, "a file under another id")
            // One name, or a folder's path of names (`Folder/IMG.jpg`): each part is a name.
            let parts = f.fileName.split(separator: "/", omittingEmptySubsequences: false)
            check(
                f.fileName.utf8.count <= LocalSendLimits.maxPathBytes && parts.count <= LocalSendLimits.maxPathParts,
                "file name length")
            for part in parts {
                check(!part.isEmpty && part.utf8.count <= limits.maxNameBytes, "file name part length")
                check(
                    !part.unicodeScalars.contains { PeerText.isUnsafe($0) || $0 == "\\" },
                    "file name \(f.fileName.debugDescription) passed")
                check(part != "." && part != "..", "a dot name passed")
            }
            check(!f.name.contains("/") && !f.name.isEmpty, "the name of \(f.fileName.debugDescription) is a path")
            check((0...limits.maxFileBytes).contains(f.size), "size \(f.size) passed")
            total += f.size
        }
        check(total <= limits.maxTotalBytes, "total \(total) passed")
        check(PeerText.isClean(r.info.alias) && r.info.alias.utf8.count <= 64, "alias not cleaned")
        check(r.orderedFiles.count == r.files.count, "ordered files lost some")
    } catch {
        checkError(error, isOneOf: [LocalSendError.self], "prepareUpload")
    }
    do {
        let d = try LocalSendJSON.device(input)
        check(PeerText.isClean(d.alias) && !d.alias.isEmpty, "alias not cleaned")
        check(d.deviceModel.map(PeerText.isClean) ?? true, "device model not cleaned")
        check(d.port.map { (1...65535).contains($0) } ?? true, "port out of range passed")
    } catch {
        checkError(error, isOneOf: [LocalSendError.self], "device")
    }
    // A datagram on the multicast group: at most one answer, and only to an announcement.
    var discovery = LocalSendDiscovery(own: own)
    let actions = discovery.receive(input, from: "192.0.2.1", now: start)
    check(actions.count <= 1, "\(actions.count) answers to one datagram")
    check(actions.isEmpty || discovery.heard.count == 1, "an answer to a device not heard")
    check(discovery.receive(input, from: "192.0.2.1", now: start).isEmpty, "a second answer within the interval")
    // A receiver's answer to this node's prepare-upload: uploads for offered files only, at most
    // two at once, or the end.
    var outbound = LocalSendOutbound(own: own, files: offered)
    let next = outbound.answered(status: 200, body: input)
    let uploads = next.compactMap { if case .upload(let f, _) = $0 { f.id } else { nil } }
    check(uploads.count <= LocalSendOutbound.maxParallel, "\(uploads.count) uploads at once")
    check(uploads.allSatisfy { id in offered.contains { $0.id == id } }, "an upload of a file not offered")
    check(!uploads.isEmpty || outbound.outcome != nil, "neither uploads nor an end")
}

let offered = (0..<3).map { LocalSendFile(id: "f\($0)", fileName: "f\($0).jpg", size: 1, fileType: "image/jpeg") }

let own = LocalSendDevice(alias: "fuzz", fingerprint: "OWN", port: 53317, protocol: "https")
let start = ContinuousClock.now

@_cdecl("fuzz_localsend_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) {
        fuzz(bytes($0, $1))
        return 0
    }
}
