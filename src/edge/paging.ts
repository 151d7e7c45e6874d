/** The URL of another page of a paged list: the request's URL with its `page` set (pages count from 0). */
function withPage(url: string, page: number): string {
  const [path, query = ''] = url.split('?', 2) as [string, string?];
  const params = new URLSearchParams(query);
  params.set('page', String(page));
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
