/** The URL of another page of a paged list: the request's URL with its `page` (pages count from 0) and other parameters set. */
function withPage(url: string, page: number, more: Record<string, string> = {}): string {
  const [path, query = ''] = url.split('?', 2) as [string, string?];
  const params = new URLSearchParams(query);
  params.set('page', String(page));
  for (const [name, value] of Object.entries(more)) params.set(name, value);
  return `${path}?${params.toString()}`;
}

/**
 * The `pagination` and `links` of a page of a paged list: `self` is the request's URL, `nextPage`
 * the same with the next page while there is one (pages count from 0).
 */
export function pageOf(url: string, page: number, perPage: number, totalItems: number) {
  const totalPages = Math.ceil(totalItems / perPage);
  return {
    pagination: { page, perPage, totalPages, totalItems },
    links: { self: { href: url }, ...(page + 1 < totalPages && { nextPage: { href: withPage(url, page + 1) } }) },
  };
}

/**
 * The `pagination` and `links` of a page of a list paged by key: as pageOf, but the next page is
 * there when the list says so (`next`: the parameters that ask for it, its key), not by counting.
 */
export function keysetPageOf(url: string, page: number, perPage: number, totalItems: number, next: Record<string, string> | undefined) {
  return {
    pagination: { page, perPage, totalPages: Math.max(Math.ceil(totalItems / perPage), next ? page + 2 : page + 1), totalItems },
    links: { self: { href: url }, ...(next && { nextPage: { href: withPage(url, page + 1, next) } }) },
  };
}
