/** A parameter of an OpenAPI path template. */
export interface TemplateParam {
  /** The name in the template (`wildcard` for find-my-way's `*`). */
  name: string;
  /** The name under which the route sees it in `ctx.params` (`*` for the wildcard). */
  key: string;
  /** An anchored ECMAScript pattern, when the route constrains the parameter with a regex. */
  pattern?: string;
}

/** One OpenAPI path template of a route. */
export interface PathTemplate {
  template: string;
  params: TemplateParam[];
}

const OPTIONAL_PARAM = /(\/:[^/()]*?)\?(\/?)$/;

/**
 * Translates a find-my-way path into OpenAPI path templates: `/books/:id` →
 * `/books/{id}`, `/files/*` → `/files/{wildcard}`, `::` → a literal `:`,
 * `:id(^\\d+$)` → `{id}` with a pattern. A trailing optional parameter
 * (`/books/:id?`) gives two templates, as find-my-way registers two routes.
 *
 * @example
 * toPathTemplates('/books/:id'); // [{ template: '/books/{id}', params: [{ name: 'id', key: 'id' }] }]
 */
export function toPathTemplates(path: string): PathTemplate[] {
  const optional = OPTIONAL_PARAM.exec(path);
  if (optional === null) return [parse(path)];
  const full = path.replace(OPTIONAL_PARAM, '$1$2');
  const without = path.replace(OPTIONAL_PARAM, '$2') || '/';
  return [parse(without), parse(full)];
}

function parse(path: string): PathTemplate {
  let template = '';
  const params: TemplateParam[] = [];
  let i = path.startsWith('*') ? -1 : 0;
  if (i === -1) {
    template = '/';
    i = 0;
  }
  while (i < path.length) {
    const c = path[i];
    if (c === ':' && path[i + 1] === ':') {
      template += ':';
      i += 2;
    } else if (c === ':') {
      let end = i + 1;
      while (end < path.length && !'(-./'.includes(path[end] ?? '')) end++;
      const name = path.slice(i + 1, end);
      const param: TemplateParam = { name, key: name };
      if (path[end] === '(') {
        const close = closingParen(path, end);
        param.pattern = anchored(path.slice(end, close + 1));
        end = close + 1;
      }
      params.push(param);
      template += `{${name}}`;
      i = end;
    } else if (c === '*') {
      params.push({ name: 'wildcard', key: '*' });
      template += '{wildcard}';
      i++;
    } else {
      template += c;
      i++;
    }
  }
  return { template, params };
}

/** Index of the `)` closing the `(` at `open`, skipping escaped characters; the end of the path if unbalanced. */
function closingParen(path: string, open: number): number {
  let depth = 0;
  for (let j = open; j < path.length; j++) {
    const c = path[j];
    if (c === '\\') j++;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return j;
  }
  return path.length - 1;
}

/** find-my-way anchors a parameter's regex (dropping its own `^`/`$`); JSON Schema patterns are unanchored. */
function anchored(group: string): string {
  let inner = group.slice(1, -1);
  if (inner.startsWith('^')) inner = inner.slice(1);
  if (inner.endsWith('$') && !inner.endsWith('\\$')) inner = inner.slice(0, -1);
  return `^(?:${inner})$`;
}

/**
 * A stable operation id from the method and template: `GET /books/{id}` →
 * `getBooksById`, `GET /` → `getRoot`.
 *
 * @example
 * operationIdOf('POST', '/books/{id}/covers'); // 'postBooksByIdCovers'
 */
export function operationIdOf(method: string, template: string): string {
  const words = template.split(/(\{[^}]*\})/).flatMap((part) => {
    if (part.startsWith('{') && part.endsWith('}')) return [`By${pascal(part.slice(1, -1))}`];
    return part
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map(pascal);
  });
  return method.toLowerCase() + (words.length === 0 ? 'Root' : words.join(''));
}

function pascal(word: string): string {
  return word
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}
