-- The catalogue. `id` is the rowid (the next one is max(id) + 1); ISBNs are unique (a second one is a 409).
CREATE TABLE books (
  id INTEGER PRIMARY KEY,
  isbn TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  author TEXT NOT NULL,
  year INTEGER NOT NULL,
  pages INTEGER NOT NULL
);
