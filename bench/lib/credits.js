/** autocannon's request options for credits of 1 to wallets picked at random, one per request. */
export function spreadCreditRequests(wallets) {
  return {
    method: 'POST',
    requests: [
      {
        setupRequest(request) {
          const walletId = wallets[Math.floor(Math.random() * wallets.length)];
          return { ...request, path: `/v1/wallets/${walletId}/credits`, body: '{"amount":1}' };
        },
      },
    ],
  };
}
