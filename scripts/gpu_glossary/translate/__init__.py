"""Translation: the translate command, the model client, prompts, protection and checks of replies."""
