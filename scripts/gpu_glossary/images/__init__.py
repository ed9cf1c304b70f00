"""Images: finding, checking and repairing image links, localizing remote images, safe SVGs."""
