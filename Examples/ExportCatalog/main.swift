// An executable target of your package that prints your tips' catalog; a build step runs it:
//   swift run tipsync-export-example > tips.json
// then uploads tips.json (PUT /admin/v1/catalog) or ships it to another platform's client.
import TipSync

struct OnboardingTip: Tip {
    var id: String { "onboarding" }
    var title: String { "Swipe to archive" }
    var message: String? { "Swipe left on any message." }

    @Parameter(id: "isLoggedIn") static var isLoggedIn: Bool = false
    static let openedInbox = Event(id: "opened-inbox")

    var rules: [Rule] {
        #Rule(Self.$isLoggedIn) { $0 == true }
        #Rule(Self.openedInbox) { $0.donations.count >= 3 }
    }
    var options: [Option] { Tips.MaxDisplayCount(2) }
}

print(try Tips.catalogJSON(of: [OnboardingTip()], displayFrequency: .daily))
