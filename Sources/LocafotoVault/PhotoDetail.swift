/// One photo with what the vault knows about it (`GET /v1/photos/{id}`, `locafoto show`).
public struct PhotoDetail: Codable, Sendable, Equatable {
    public var photo: PhotoRecord
    public var media: PhotoMediaInfo
    /// Names of the albums it is in.
    public var albums: [String]

    public init(photo: PhotoRecord, media: PhotoMediaInfo, albums: [String]) {
        self.photo = photo
        self.media = media
        self.albums = albums
    }
}
