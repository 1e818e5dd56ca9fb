// The front page: who is logged in (GET /api/me, by the session cookie) and the latest books.
const who = document.getElementById('who');
const login = document.getElementById('login');
const logout = document.getElementById('logout');

async function showUser() {
  const response = await fetch('/api/me');
  if (response.ok) {
    const { user } = await response.json();
    who.textContent = `Logged in as ${user}`;
    who.dataset.state = 'in';
    logout.hidden = false;
  } else {
    who.textContent = 'Not logged in';
    who.dataset.state = 'out';
    login.hidden = false;
    document.getElementById('failed').hidden = new URLSearchParams(location.search).get('login') !== 'failed';
  }
}

async function showBooks() {
  const response = await fetch('/api/books?limit=5');
  if (!response.ok) return;
  const { data } = await response.json();
  const list = document.getElementById('books');
  for (const book of data) {
    const item = document.createElement('li');
    item.textContent = `${book.title}, ${book.author}`;
    list.append(item);
  }
}

showUser();
showBooks();
