/** The URL of another page of a paged list: the request's URL with its `page` set (pages count from 0). */
export function withPage(url: string, page: number): string {
  const [path, query = ''] = url.split('?', 2) as [string, string?];
  const params = new URLSearchParams(query);
  params.set('page', String(page));
  return `${path}?${params.toString()}`;
}
