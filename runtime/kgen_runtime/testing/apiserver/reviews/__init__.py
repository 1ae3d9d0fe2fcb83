"""SubjectAccessReview, TokenReview and the self reviews the emulator answers."""
