import { useState } from 'react';
import { operations } from '../api.js';
import { formatAmount, formatDateTime, formatRelative } from '../format.js';
import { navigate } from '../router.js';
import { Link, Page, PagedItems, present, SearchBox, StatusBadge, Table, usePagedList } from '../ui.js';

export function WalletsPage() {
  const [userId, setUserId] = useState('');
  const list = usePagedList((page) => operations.listWallets({ query: { ...page, ...present({ user_id: userId }) } }), [userId]);
  return (
    <Page title="Wallets">
      <SearchBox
        label="Search by user id, or open a wallet by its id"
        placeholder="usr_… or wlt_…"
        value={userId}
        onSearch={(value) => (value.startsWith('wlt_') ? navigate(`/wallets/${value}`) : setUserId(value))}
      />
      <PagedItems list={list} empty={userId === '' ? 'No wallets yet.' : `No wallets for ${userId}.`}>
        {(data) => (
          <Table caption="Wallets" columns={['Wallet', { number: 'Balance' }, 'Status', 'User', 'Created']}>
            {data.map((wallet) => (
              <tr key={wallet.id}>
                <td>
                  <Link to={`/wallets/${wallet.id}`}>{wallet.id}</Link>
                </td>
                <td className="number">{formatAmount(wallet.balance, wallet.currency)}</td>
                <td>
                  <StatusBadge status={wallet.status} />
                </td>
                <td>
                  <Link to={`/users/${wallet.user_id}`}>{wallet.user_id}</Link>
                </td>
                <td title={formatDateTime(wallet.created_at)}>{formatRelative(wallet.created_at)}</td>
              </tr>
            ))}
          </Table>
        )}
      </PagedItems>
    </Page>
  );
}
