"""The site: the MkDocs plugin and Markdown extension, generated pages, llms.txt, building and serving."""
