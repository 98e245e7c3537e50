import LocafotoNoise
import Testing

@Suite("Protocol names and patterns")
struct ProtocolNameTests {
    @Test func locafotoName() {
        #expect(NoiseProtocolName.locafoto.name == "Noise_XX_25519_ChaChaPoly_BLAKE2b")
        #expect(NoiseProtocolName.locafoto.pattern == .xx)
    }

    @Test(arguments: [
        "Noise_NN_25519_ChaChaPoly_SHA256", "Noise_KK_25519_AESGCM_BLAKE2b", "Noise_IK_25519_ChaChaPoly_BLAKE2b",
        "Noise_XX_25519_AESGCM_SHA256", "Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b", "Noise_NNpsk0_25519_ChaChaPoly_SHA256",
        "Noise_IKpsk2_25519_ChaChaPoly_SHA256", "Noise_NNpsk0+psk2_25519_AESGCM_SHA256",
    ])
    func roundTrip(_ text: String) throws {
        let name = try NoiseProtocolName(parsing: text)
        #expect(name.name == text)
        #expect(try NoiseProtocolName(parsing: name.name) == name)
    }

    @Test(arguments: [
        "", "Noise", "Noise_XX_25519_ChaChaPoly", "Noise_XX_448_ChaChaPoly_BLAKE2b",
        "Noise_XX_25519_ChaChaPoly_BLAKE2s",
        "Noise_XX_25519_ChaChaPoly_SHA512", "Noise_XX_25519_AES_SHA256", "Noise_NK_25519_ChaChaPoly_SHA256",
        "Noise_XXpsk4_25519_ChaChaPoly_SHA256", "Noise_XXpsk03_25519_ChaChaPoly_SHA256",
        "Noise_XXfallback_25519_ChaChaPoly_SHA256",
        "Noise_XXpsk3+psk1_25519_ChaChaPoly_SHA256", "Noise_XXpsk3+psk3_25519_ChaChaPoly_SHA256",
        "Noise_XX_25519_ChaChaPoly_BLAKE2b_extra", "noise_XX_25519_ChaChaPoly_BLAKE2b",
        "Noise_xx_25519_ChaChaPoly_BLAKE2b",
    ])
    func unsupported(_ text: String) {
        expectNoiseError(.unsupported) { try NoiseProtocolName(parsing: text) }
    }

    /// The pattern tables of §7.4 and the psk modifier of §9.2.
    @Test func patternsAsData() throws {
        #expect(NoisePattern.nn.messages == [[.e], [.e, .ee]])
        #expect(NoisePattern.kk.initiatorPreMessage == [.s] && NoisePattern.kk.responderPreMessage == [.s])
        #expect(NoisePattern.kk.messages == [[.e, .es, .ss], [.e, .ee, .se]])
        #expect(NoisePattern.ik.initiatorPreMessage == [] && NoisePattern.ik.responderPreMessage == [.s])
        #expect(NoisePattern.ik.messages == [[.e, .es, .s, .ss], [.e, .ee, .se]])
        #expect(NoisePattern.xx.messages == [[.e], [.e, .ee, .s, .es], [.s, .se]])
        #expect(NoisePattern.xxpsk3.name == "XXpsk3")
        #expect(NoisePattern.xxpsk3.messages == [[.e], [.e, .ee, .s, .es], [.s, .se, .psk]])
        #expect(try NoisePattern(named: "NNpsk0").messages == [[.psk, .e], [.e, .ee]])
        #expect(try NoisePattern(named: "NNpsk0+psk2").messages == [[.psk, .e], [.e, .ee, .psk]])
        #expect(NoisePattern.xxpsk3.pskCount == 1 && NoisePattern.xx.pskCount == 0)
    }
}
